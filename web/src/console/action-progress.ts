import { h } from '../dom.ts';
import type { CallStep } from './console-api.ts';

/**
 * A change in flight, shown where its button was: a bar of hosts settled of
 * hosts targeted (moving without a value until the first settles), the
 * broker's last step in words, and the seconds it has taken. The steps come
 * from the broker's progress notifications for the call (ConsoleApi.act); the
 * clock only says the call is still alive between them.
 */
export class ActionProgress {
  readonly element: HTMLElement;
  private readonly bar: HTMLProgressElement;
  private readonly text: HTMLElement;
  private step: CallStep | undefined;
  private readonly startedMs = Date.now();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly doing: string) {
    this.bar = h('progress', { 'aria-label': doing });
    this.text = h('span', { class: 'action-step' });
    this.element = h('span', { class: 'action-progress', role: 'status', 'aria-live': 'polite' }, this.bar, this.text);
    this.draw();
    this.timer = setInterval(() => this.draw(), 1000);
  }

  /** What the broker says the call did last. */
  readonly update = (step: CallStep): void => {
    this.step = step;
    this.element.dataset.step = step.message;
    if (step.total !== undefined && step.progress > 0) {
      this.bar.max = step.total;
      this.bar.value = step.progress;
    }
    this.draw();
  };

  /** Seconds since the call started. */
  get elapsedS(): number {
    return (Date.now() - this.startedMs) / 1000;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private draw(): void {
    this.text.textContent = `${this.doing}… ${this.step ? `${this.step.message} · ` : ''}${Math.round(this.elapsedS)} s`;
  }
}
