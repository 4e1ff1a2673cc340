/** Every control character (C0, DEL, C1) but newline and tab. */
const CONTROLS = /[^\P{Cc}\n\t]/gu;
/** Every control character, newline and tab included. */
const CONTROLS_IN_A_LINE = /\p{Cc}/gu;

function spelledOut(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * Text as a terminal may show it: escape sequences, carriage returns and
 * every other control character spelled out (`\u001b`), so text a host
 * wrote (labels, names, errors, log lines) can neither move the cursor nor
 * rewrite what was printed before it. Newlines and tabs stay, as the layout
 * of what we print. Inside a JSON string a spelled-out character is its own
 * JSON escape, so JSON output stays the same JSON.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, spelledOut);
}

/** One table cell or log line of fleet text: newlines and tabs spelled out too, so it cannot start a row of its own. */
export function terminalCell(text: string): string {
  return text.replace(CONTROLS_IN_A_LINE, spelledOut);
}
