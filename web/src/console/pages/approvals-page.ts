import { h, replace } from '../../dom.ts';
import { formatTime, formatValue } from '../../format.ts';
import type { Approval } from '../console-api.ts';
import type { Page, PageContext } from '../page.ts';

/** Approvals are not fleet resources, so no change notice names them: the page looks again this often while it is open. */
const POLL_MS = 2000;

/**
 * The calls waiting for a second person (`--approval-level`): who called,
 * the tool, the exact targets and arguments, and when the wait ends. Each
 * has Approve and Deny, with a reason, where this identity may decide it.
 */
export function approvalsPage(context: PageContext): Page {
  const list = h('div', { class: 'approvals' });
  const status = h('p', { class: 'notice', role: 'status' });

  const decide = async (approval: Approval, decision: 'approve' | 'deny', reason: string) => {
    try {
      await context.api.decide(approval.id, decision, reason);
      status.className = 'notice ok';
      status.textContent = `${approval.tool} by ${approval.identity}: ${decision === 'approve' ? 'approved' : 'denied'}.`;
    } catch (error) {
      status.className = 'notice error';
      status.textContent = `${approval.id}: ${(error as Error).message}`;
    }
    await page.refresh([]);
  };

  const card = (approval: Approval) => {
    const reason = h('input', { type: 'text', name: 'reason', placeholder: 'reason (optional)', 'aria-label': `reason for ${approval.id}` });
    return h(
      'article',
      { class: 'approval', 'data-approval': approval.id },
      h('h2', {}, `${approval.tool} by ${approval.identity}`),
      h(
        'dl',
        {},
        h('dt', {}, 'targets'),
        h('dd', { class: 'targets' }, approval.targets.join(', ') || '–'),
        h('dt', {}, 'arguments'),
        h('dd', { class: 'arguments' }, h('code', {}, formatValue(approval.arguments))),
        h('dt', {}, 'asked'),
        h('dd', {}, formatTime(approval.createdAt)),
        h('dt', {}, 'expires'),
        h('dd', {}, formatTime(approval.expiresAt)),
        h('dt', {}, 'id'),
        h('dd', {}, approval.id),
      ),
      approval.may_decide
        ? h(
            'div',
            { class: 'actions' },
            reason,
            h('button', { type: 'button', onclick: () => void decide(approval, 'approve', reason.value) }, 'Approve'),
            h('button', { type: 'button', class: 'danger', onclick: () => void decide(approval, 'deny', reason.value) }, 'Deny'),
          )
        : h('p', { class: 'muted' }, 'Another person must decide this one (your own call, or above your level).'),
    );
  };

  let shown = '';
  const timer = setInterval(() => void page.refresh([]).catch(() => {}), POLL_MS);
  const page: Page = {
    element: h('section', { class: 'page approvals-page' }, h('h1', {}, 'Approvals'), status, list),
    async refresh() {
      const rows = await context.api.approvals();
      // Redrawn only when the list changed, so a reason being typed is not lost.
      const key = rows.map((row) => `${row.id}:${row.may_decide}`).join(',');
      if (key === shown && list.childElementCount > 0) return;
      shown = key;
      if (rows.length === 0) replace(list, h('p', { class: 'muted' }, 'No call waits for approval.'));
      else replace(list, ...rows.map(card));
    },
    destroy() {
      clearInterval(timer);
    },
  };
  return page;
}
