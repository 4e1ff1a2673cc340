import type { CallTool } from '../call-tool.ts';
import { type LogLine, LogViewer } from '../components/log-viewer.ts';
import { h, replace } from '../dom.ts';
import type { Widget } from './widget.ts';

/** How often the widget reads new lines through its host. */
const FOLLOW_MS = 3000;

/** The lines of a docker_logs (one container) or get_logs (a service's tasks) answer. */
function linesOf(structured: Record<string, unknown>): LogLine[] {
  const nodes = (Array.isArray(structured.hosts) ? structured.hosts : [structured]) as Record<string, unknown>[];
  return nodes.flatMap((node) =>
    ((node.lines ?? []) as (LogLine & { task?: string })[]).map((line) => ({
      stream: line.stream,
      text: line.text,
      ...(line.timestamp ? { timestamp: line.timestamp } : {}),
      // Each line says where it came from: the task of a service, else the host that holds the container.
      ...(line.task ? { source: line.task } : typeof node.host === 'string' ? { source: node.host } : {}),
    })),
  );
}

/**
 * Logs with stdout and stderr told apart and a search box; it follows new lines
 * by calling the same tool again through the host, from the newest timestamp seen.
 */
export function logViewerWidget(): Widget {
  const element = h('div', { class: 'widget log-viewer-widget' });
  let timer: ReturnType<typeof setTimeout> | undefined;
  return {
    element,
    show(answer, { call, input }) {
      clearTimeout(timer);
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const structured = answer.structured ?? {};
      const tool = 'container' in structured || Array.isArray(structured.hosts) ? 'docker_logs' : 'get_logs';
      const subject = String(structured.container ?? input.service ?? input.name ?? 'logs');
      const viewer = new LogViewer(typeof input.host === 'string' ? `${subject} on ${input.host}` : subject);
      viewer.append(linesOf(structured));
      replace(element, viewer.element);
      // Logs are read from the end: the newest lines are in view when the widget opens.
      requestAnimationFrame(() => viewer.scrollToNewest());
      const follow = async (caller: CallTool) => {
        const since = viewer.lastTimestamp;
        const args =
          tool === 'docker_logs'
            ? { ...input, timestamps: true, ...(since ? { since } : {}), follow_ms: undefined }
            : { ...input, ...(since ? { since } : {}) };
        const next = await caller(tool, JSON.parse(JSON.stringify(args)) as Record<string, unknown>);
        if (next.error) viewer.setStatus(next.error.message);
        else {
          viewer.append(linesOf(next.structured ?? {}).filter((line) => !since || (line.timestamp ?? '') >= since));
          viewer.setStatus(`following · ${new Date().toLocaleTimeString()}`);
        }
        timer = setTimeout(() => void follow(caller), FOLLOW_MS);
      };
      timer = setTimeout(() => void follow(call), FOLLOW_MS);
    },
  };
}
