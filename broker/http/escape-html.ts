/** Text as HTML shows it, whoever wrote it: every character that could open markup or end an attribute is an entity. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
