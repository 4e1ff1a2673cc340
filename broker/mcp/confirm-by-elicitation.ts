import { createHash } from 'node:crypto';
import { type InputRequiredResult, inputRequired, inputResponse, type ServerContext } from '@modelcontextprotocol/server';
import type { FleetError } from '../../shared/errors/fleet-error.ts';

/** The key of the confirmation in a retried call's input responses. */
const CONFIRM_KEY = 'confirm';

interface Target {
  host: string;
  resource?: string;
}

/** What a client answered to a confirmation it was asked for. */
export type ConfirmAnswer = 'none' | 'accepted' | 'declined';

/**
 * The targets of a refused destructive call, fingerprinted. The fingerprint
 * rides the round trip as request state: when the user accepts, the call is
 * resolved again and runs only if it still hits exactly what was shown. The
 * state needs no signature: forging it gains nothing a caller could not get
 * by sending `confirm: true` itself.
 */
function fingerprint(tool: string, targets: Target[]): string {
  return createHash('sha256')
    .update(JSON.stringify([tool, targets]))
    .digest('base64url');
}

function targetsOf(error: FleetError): Target[] {
  return (error.details?.targets as Target[] | undefined) ?? [];
}

/** Whether the client can be asked through a form elicitation (on either era). */
export function canElicit(capabilities: { elicitation?: { form?: object } & object } | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (!elicitation) return false;
  // An empty elicitation capability means form mode (the rule from before modes existed).
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined;
}

/** The user's answer carried by a retried call, if any. */
export function confirmAnswer(ctx: ServerContext): ConfirmAnswer {
  const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_KEY);
  if (answer.kind !== 'elicit') return 'none';
  return answer.action === 'accept' && answer.content?.confirm === true ? 'accepted' : 'declined';
}

/** Whether an accepted confirmation was given for exactly these targets. */
export function confirmedTargets(ctx: ServerContext, tool: string, refusal: FleetError): boolean {
  return ctx.mcpReq.requestState<string>() === fingerprint(tool, targetsOf(refusal));
}

/** Asks the user, through the client, to confirm a destructive call on the exact targets it would hit. */
export function askToConfirm(tool: string, refusal: FleetError): InputRequiredResult {
  const targets = targetsOf(refusal);
  const listed = targets.map((t) => `"${t.resource ?? t.host}"${t.resource ? ` on "${t.host}"` : ''}`).join(', ') || 'nothing';
  return inputRequired({
    inputRequests: {
      [CONFIRM_KEY]: inputRequired.elicit({
        message: `${tool} is destructive. It would act on: ${listed}. Run it?`,
        requestedSchema: {
          type: 'object',
          properties: {
            confirm: { type: 'boolean', title: `Run ${tool}`, description: `Yes: ${tool} acts on ${listed}. No: nothing changes.` },
          },
          required: ['confirm'],
        },
      }),
    },
    requestState: fingerprint(tool, targets),
  });
}
