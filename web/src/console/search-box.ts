import type { CallTool } from '../call-tool.ts';
import { h, replace } from '../dom.ts';

export interface Found {
  id: string;
  name: string;
  type: string;
  state?: string;
  detail?: string;
  host?: string;
}

/** How long typing may pause before the index is asked. */
const DEBOUNCE_MS = 200;

/**
 * One box over `find` on every page of the console: `/` focuses it, results
 * come grouped by type (a few of each, with how many the index holds), the
 * arrow keys move through them, Enter opens the one chosen and Escape closes
 * the list. It is a combobox with a listbox, so a screen reader follows it.
 */
export class SearchBox {
  readonly element: HTMLElement;
  private readonly input = h('input', {
    type: 'search',
    class: 'search-input',
    placeholder: 'Search the fleet  /',
    role: 'combobox',
    'aria-label': 'search the fleet',
    'aria-expanded': 'false',
    'aria-controls': 'search-results',
    'aria-autocomplete': 'list',
    autocomplete: 'off',
  });
  private readonly list = h('div', { id: 'search-results', class: 'search-results', role: 'listbox', hidden: true });
  private results: Found[] = [];
  private active = -1;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private asked = 0;

  constructor(
    private readonly call: CallTool,
    private readonly open: (found: Found) => void,
  ) {
    this.element = h('div', { class: 'search-box' }, this.input, this.list);
    this.input.addEventListener('input', () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.ask(), DEBOUNCE_MS);
    });
    this.input.addEventListener('keydown', (event) => this.key(event));
    this.input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    document.addEventListener('keydown', (event) => {
      const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLSelectElement;
      if (event.key === '/' && !typing && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        this.input.focus();
        this.input.select();
      }
    });
  }

  private async ask(): Promise<void> {
    const query = this.input.value.trim();
    const turn = ++this.asked;
    if (!query) return this.close();
    const answer = await this.call('find', { query });
    // An older answer arriving after a newer question is dropped.
    if (turn !== this.asked) return;
    if (answer.error) {
      this.results = [];
      this.render(answer.error.message, {});
      return;
    }
    this.results = (answer.structured?.rows ?? []) as Found[];
    this.active = this.results.length ? 0 : -1;
    this.render(`Nothing matches “${query}”.`, (answer.structured?.counts ?? {}) as Record<string, number>);
  }

  private render(empty: string, counts: Record<string, number>): void {
    const groups = new Map<string, { found: Found; index: number }[]>();
    for (const [index, found] of this.results.entries()) groups.set(found.type, [...(groups.get(found.type) ?? []), { found, index }]);
    replace(
      this.list,
      groups.size === 0
        ? h('p', { class: 'empty' }, empty)
        : [...groups].map(([type, members]) =>
            h(
              'div',
              { class: 'search-group', role: 'group', 'aria-label': `${type}s` },
              h('p', { class: 'search-group-title' }, `${type}s`, counts[type] !== undefined ? ` · ${counts[type]}` : ''),
              ...members.map(({ found, index }) =>
                h(
                  'div',
                  {
                    id: `search-option-${index}`,
                    class: index === this.active ? 'search-option active' : 'search-option',
                    role: 'option',
                    'aria-selected': String(index === this.active),
                    'data-type': found.type,
                    'data-name': found.name,
                    onmousedown: (event: Event) => {
                      event.preventDefault();
                      this.choose(index);
                    },
                  },
                  h('strong', {}, found.name),
                  found.state ? h('span', { class: 'muted' }, ` ${found.state}`) : null,
                  found.host ? h('span', { class: 'muted' }, ` on ${found.host}`) : null,
                ),
              ),
            ),
          ),
    );
    this.list.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
    if (this.active >= 0) this.input.setAttribute('aria-activedescendant', `search-option-${this.active}`);
    else this.input.removeAttribute('aria-activedescendant');
  }

  private key(event: KeyboardEvent): void {
    if (event.key === 'Escape') {
      this.close();
      this.input.blur();
      return;
    }
    if (this.results.length === 0) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      this.active = (this.active + step + this.results.length) % this.results.length;
      for (const option of this.list.querySelectorAll('[role="option"]')) {
        const on = option.id === `search-option-${this.active}`;
        option.classList.toggle('active', on);
        option.setAttribute('aria-selected', String(on));
        if (on) option.scrollIntoView({ block: 'nearest' });
      }
      this.input.setAttribute('aria-activedescendant', `search-option-${this.active}`);
    } else if (event.key === 'Enter' && this.active >= 0) {
      event.preventDefault();
      this.choose(this.active);
    }
  }

  private choose(index: number): void {
    const found = this.results[index];
    if (!found) return;
    this.close();
    this.input.value = '';
    this.open(found);
  }

  private close(): void {
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
  }
}
