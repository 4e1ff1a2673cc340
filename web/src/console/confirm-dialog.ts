import { h } from '../dom.ts';

/**
 * Asks before a destructive call: the exact targets the broker said it would
 * hit (its confirm_required answer), Confirm or Cancel. Resolves true on Confirm.
 */
export function confirmDialog(tool: string, message: string, targets: { host: string; resource?: string }[]): Promise<boolean> {
  return new Promise((resolve) => {
    const confirm = h('button', { type: 'button', class: 'danger', 'data-action': 'confirm' }, 'Confirm');
    const cancel = h('button', { type: 'button', 'data-action': 'cancel' }, 'Cancel');
    const dialog = h(
      'dialog',
      { class: 'confirm-dialog' },
      h('h2', {}, `Confirm ${tool}`),
      h('p', {}, message),
      h('ul', {}, ...targets.map((t) => h('li', {}, t.resource ? `${t.host}: ${t.resource}` : t.host))),
      h('div', { class: 'dialog-buttons' }, cancel, confirm),
    );
    const close = (answer: boolean) => {
      dialog.close();
      dialog.remove();
      resolve(answer);
    };
    confirm.addEventListener('click', () => close(true));
    cancel.addEventListener('click', () => close(false));
    dialog.addEventListener('cancel', () => close(false));
    document.body.append(dialog);
    dialog.showModal();
  });
}
