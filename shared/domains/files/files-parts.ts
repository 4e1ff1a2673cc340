import type { DomainParts } from '../domain-parts.ts';

/** A host whose operator turned file_read's redaction off is listed by fleet status and warned of by the doctor. */
export const filesParts = {
  trust: [
    {
      check: 'file_redaction',
      category: 'files',
      // Declared facts travel as strings.
      skipped: (facts) => facts.file_secrets_shown === 'true' || facts.file_secrets_shown === true,
      summary: 'file_read shows values that look like secrets (--file-show-secrets)',
      subject: 'files',
      message: 'file_read does not redact passwords, tokens or private keys in the files it may read (--file-show-secrets)',
      action: 'Drop --file-show-secrets, or narrow --file-paths to files that hold no secrets.',
    },
  ],
} as const satisfies DomainParts;
