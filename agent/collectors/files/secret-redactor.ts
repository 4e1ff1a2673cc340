const REDACTED = '[redacted]';

/**
 * What names a secret within a key (`DB_PASSWORD`, `client_secret`, `api-key`, `requirepass`, `auth_token`), then the
 * rest of the key. Not `pass` alone: nginx's `proxy_pass` holds an address. The key's part before the word stays
 * outside the match, so a long line costs one scan per occurrence of a word, not one per character.
 */
const SECRET_WORD = String.raw`(?:passw(?:or)?d|passphrase|requirepass|masterauth|secret|token|credentials?|(?:api|access|private|auth|signing|encryption)[-_.]?key)[\w.-]*`;
/** A value: quoted (the quotes kept), or a run up to a space, comma or semicolon. */
const VALUE = String.raw`(?:"(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;]+)`;

/** `key = value`, `key: value`, `"key": "value"`, anywhere in a line. */
const ASSIGNED = new RegExp(String.raw`(${SECRET_WORD}["']?\s*[:=]\s*)(${VALUE})`, 'gi');
/** A directive whose value follows its key after spaces, alone on its line (`requirepass hunter2`, `password "x";`). */
const DIRECTIVE = new RegExp(String.raw`^(\s*[\w.-]*?${SECRET_WORD}\s+)(${VALUE})(\s*;?\s*)$`, 'i');
/** The password of a URL (`postgres://app:hunter2@db/app`). */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)([^\s@/]+)(@)/gi;
/** A credential sent in a header (`Authorization: Bearer …`, `Basic …`). */
const SCHEME_CREDENTIAL = /(\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})/gi;
/** Tokens recognisable by their shape alone: AWS access keys, GitHub and Slack tokens. */
const SHAPED = /\b(?:AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|xox[abpors]-[A-Za-z0-9-]{10,})\b/g;

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----/;

/** Whether a value is a secret's place rather than a secret: empty, or already redacted. */
function placeholder(value: string): boolean {
  const bare = value.replace(/^["']|["']$/g, '');
  return bare === '' || bare === REDACTED;
}

/**
 * Replaces what looks like a secret in a file's lines, in order (it follows a
 * private key block from its BEGIN line to its END line): values of keys named
 * like passwords, tokens and keys, URL passwords, header credentials, tokens of
 * a known shape, and the body of a PEM private key. The key names stay, so the
 * reader still sees that a value is set. It errs on the side of hiding a value
 * that was not a secret (a `token_file` path): the operator can turn it off.
 */
export class SecretRedactor {
  /** Values replaced so far. */
  count = 0;
  private inPrivateKey = false;

  line(text: string): string {
    if (this.inPrivateKey) {
      if (PEM_END.test(text)) {
        this.inPrivateKey = false;
        return text;
      }
      return REDACTED;
    }
    if (PEM_BEGIN.test(text)) {
      this.count += 1;
      // A key on one line (a JSON string with \n escapes): what lies between its markers.
      if (PEM_END.test(text)) return text.replace(/(-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----).*?(-----END)/, `$1${REDACTED}$2`);
      this.inPrivateKey = true;
      return text;
    }
    const swap = (whole: string, head: string, value: string, tail = '') => {
      if (placeholder(value)) return whole;
      this.count += 1;
      const quote = /^["']/.test(value) ? value[0] : '';
      return `${head}${quote}${REDACTED}${quote}${tail}`;
    };
    let out = text.replace(DIRECTIVE, (whole, head: string, value: string, tail: string) => swap(whole, head, value, tail));
    out = out.replace(ASSIGNED, (whole, head: string, value: string) => swap(whole, head, value));
    out = out.replace(URL_PASSWORD, (whole, head: string, value: string, at: string) => swap(whole, head, value, at));
    out = out.replace(SCHEME_CREDENTIAL, (whole, head: string, value: string) => swap(whole, head, value));
    return out.replace(SHAPED, () => {
      this.count += 1;
      return REDACTED;
    });
  }
}
