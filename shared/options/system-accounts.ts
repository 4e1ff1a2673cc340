import { readFileSync } from 'node:fs';

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** The `name:x:id:…` lines of an /etc/passwd or /etc/group text, by their first three fields. */
function entries(text: string): { name: string; id: number; gid: number }[] {
  return text.split('\n').flatMap((line) => {
    const [name, , id, gid] = line.split(':');
    if (!name || id === undefined || !/^\d+$/.test(id)) return [];
    return [{ name, id: Number(id), gid: gid !== undefined && /^\d+$/.test(gid) ? Number(gid) : Number(id) }];
  });
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/**
 * The users and groups this machine's /etc/passwd and /etc/group name (Node
 * has no getpwnam): a command's `run_as` and a file's owner are named with
 * them. In a container these are the container's, not the host's.
 */
export class SystemAccounts {
  private readonly users: readonly SystemUser[];
  private readonly groups: ReadonlyMap<number, string>;

  constructor(passwd: string, group: string) {
    this.users = entries(passwd).map(({ name, id, gid }) => ({ name, uid: id, gid }));
    this.groups = new Map(entries(group).map(({ name, id }) => [id, name]));
  }

  static read(etc = '/etc'): SystemAccounts {
    return new SystemAccounts(readOrEmpty(`${etc}/passwd`), readOrEmpty(`${etc}/group`));
  }

  user(name: string): SystemUser | undefined {
    return this.users.find((user) => user.name === name);
  }

  userName(uid: number): string | null {
    return this.users.find((user) => user.uid === uid)?.name ?? null;
  }

  groupName(gid: number): string | null {
    return this.groups.get(gid) ?? null;
  }
}
