import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { CallLog } from '../../calls/call-route.ts';

/** The logger name the broker's own notes carry. */
const LOGGER = 'fleetmesh';

/**
 * A tool call's log as MCP log notifications, to the session that made the
 * call and no other. While the call is in flight a note rides its request, at
 * the level the client asked for (`logging/setLevel` on a 2025-era session,
 * the request's own log level on 2026-07-28). Once the call has answered, a
 * note (a host answering late) still reaches a 2025-era session through its
 * own level; a 2026-07-28 request has no channel left, and the note is dropped.
 */
export class CallLogSink {
  private answered = false;

  constructor(
    private readonly ctx: ServerContext,
    /** The 2025-era session's server, which outlives the request; undefined on 2026-07-28. */
    private readonly sessionServer: Server | undefined,
  ) {}

  readonly log: CallLog = (level, message, fields) => {
    const data = { message, ...fields };
    if (!this.answered) {
      void this.ctx.mcpReq.log(level, data, LOGGER).catch(() => {});
      return;
    }
    void this.sessionServer?.sendLoggingMessage({ level, logger: LOGGER, data }, this.ctx.sessionId).catch(() => {});
  };

  /** The call has answered: later notes go to the session, not the request. */
  finish(): void {
    this.answered = true;
  }
}
