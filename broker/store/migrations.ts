/**
 * The broker's schema, as an ordered list of migrations, for both engines:
 * written in SQLite's column types, which the PostgreSQL engine spells its own
 * way (`postgresDialect`). Each engine records how many have run (SQLite's
 * `PRAGMA user_version`, PostgreSQL's `schema_version` table); each runs once,
 * in a transaction. Append, never edit: a released migration is part of every
 * existing data dir and database.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: agents, join tokens, issued certificates, revocations.
  `
  CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    token_labels_json TEXT NOT NULL DEFAULT '{}',
    reported_labels_json TEXT NOT NULL DEFAULT '{}',
    public_key_sha256 TEXT NOT NULL,
    enrolled_at INTEGER NOT NULL,
    enrolled_with_token TEXT,
    last_seen_at INTEGER,
    state TEXT NOT NULL DEFAULT 'offline',
    version TEXT NOT NULL DEFAULT '',
    hello_json TEXT,
    cert_serial TEXT,
    cert_not_after INTEGER,
    revoked_at INTEGER,
    revoked_reason TEXT
  );
  CREATE UNIQUE INDEX agents_live_name ON agents(name COLLATE NOCASE) WHERE revoked_at IS NULL;

  CREATE TABLE join_tokens (
    id TEXT PRIMARY KEY,
    secret_sha256 TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    uses_allowed INTEGER,
    uses INTEGER NOT NULL DEFAULT 0,
    labels_json TEXT NOT NULL DEFAULT '{}',
    last_used_at INTEGER,
    revoked_at INTEGER
  );

  CREATE TABLE certificates (
    serial TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL REFERENCES agents(id),
    issued_at INTEGER NOT NULL,
    not_before INTEGER NOT NULL,
    not_after INTEGER NOT NULL,
    public_key_sha256 TEXT NOT NULL,
    issued_by TEXT NOT NULL
  );
  CREATE INDEX certificates_agent ON certificates(agent_id);

  CREATE TABLE revocations (
    serial TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    revoked_at INTEGER NOT NULL,
    reason TEXT NOT NULL
  );

  CREATE TABLE broker_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  `,
  // 2: MCP client identities and the audit log.
  `
  CREATE TABLE identities (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL,
    level INTEGER NOT NULL,
    grants_json TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_used_at INTEGER,
    revoked_at INTEGER
  );
  CREATE UNIQUE INDEX identities_live_name ON identities(name) WHERE revoked_at IS NULL;

  CREATE TABLE audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    call_id TEXT NOT NULL UNIQUE,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    identity TEXT NOT NULL,
    tool TEXT NOT NULL,
    action TEXT NOT NULL,
    level INTEGER NOT NULL,
    targets_json TEXT NOT NULL,
    arguments_json TEXT NOT NULL,
    outcome TEXT NOT NULL,
    error_code TEXT,
    duration_ms INTEGER
  );
  CREATE INDEX audit_started ON audit(started_at);
  `,
  // 3: what the fleet index remembers beyond the agents' own memory: task
  // failures (the orchestrator keeps five tasks per slot) and minute-resolution metrics.
  `
  CREATE TABLE task_failures (
    task_id TEXT PRIMARY KEY,
    cluster_id TEXT NOT NULL,
    service_id TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX task_failures_service ON task_failures(service_id, at);

  CREATE TABLE metrics (
    kind TEXT NOT NULL,
    entity TEXT NOT NULL,
    minute INTEGER NOT NULL,
    host_id TEXT NOT NULL,
    name TEXT NOT NULL,
    service TEXT,
    cpu_percent REAL,
    memory_bytes REAL,
    net_bytes_per_s REAL,
    PRIMARY KEY (kind, entity, minute)
  ) WITHOUT ROWID;
  CREATE INDEX metrics_minute ON metrics(minute);
  CREATE INDEX metrics_service ON metrics(service, minute);
  `,
  // 4: refusals in the audit: who was refused (an identity, or the source
  // address of a stranger), why, and the agents a call targeted by id, so a
  // re-enrolled name is told apart from the revoked agent that had it; and a
  // note for what the outcome alone does not say (an agent that finished after
  // the caller's deadline).
  `
  ALTER TABLE audit ADD COLUMN note TEXT;
  ALTER TABLE audit ADD COLUMN source TEXT;
  ALTER TABLE audit ADD COLUMN reason TEXT;
  ALTER TABLE audit ADD COLUMN target_ids_json TEXT NOT NULL DEFAULT '[]';
  CREATE INDEX audit_outcome ON audit(outcome, seq);
  `,
  // 5: roles over shared objects (a cluster's manager or member) the
  // operator granted: through a join token (scope "*": whatever the agent
  // manages) or with fleetmesh agents approve (scope: one object's id or name).
  `
  ALTER TABLE join_tokens ADD COLUMN roles_json TEXT NOT NULL DEFAULT '[]';

  CREATE TABLE agent_roles (
    agent_id TEXT NOT NULL REFERENCES agents(id),
    role TEXT NOT NULL,
    scope TEXT NOT NULL,
    granted_at INTEGER NOT NULL,
    granted_by TEXT NOT NULL,
    PRIMARY KEY (agent_id, role, scope)
  );
  `,
  // 6: MCP tasks: long calls a client runs in the background (an id at once,
  // status to poll, the result later). Each belongs to the identity that made
  // it and outlives its connection until expires_at.
  `
  CREATE TABLE mcp_tasks (
    task_id TEXT PRIMARY KEY,
    identity_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    result_json TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    ttl_ms INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX mcp_tasks_identity ON mcp_tasks(identity_id, created_at);
  CREATE INDEX mcp_tasks_expires ON mcp_tasks(expires_at);
  `,
  // 7: in a cluster, the broker that began each audit row, so the others can
  // settle the rows a broker that died left pending (null on a single broker).
  `
  ALTER TABLE audit ADD COLUMN broker_id TEXT;
  CREATE INDEX audit_pending_broker ON audit(broker_id) WHERE outcome = 'pending';
  `,
  // 8: the broker running each MCP task (null on a single broker), so a task
  // whose broker died or restarted ends as failed instead of working until it
  // expires; and the audit row of its call, whose outcome its result reports.
  `
  ALTER TABLE mcp_tasks ADD COLUMN broker_id TEXT;
  ALTER TABLE mcp_tasks ADD COLUMN audit_id TEXT;
  CREATE INDEX mcp_tasks_working_broker ON mcp_tasks(broker_id) WHERE status = 'working';
  `,
  // 9: 2025-era MCP sessions, so that another broker (or this one restarted)
  // can resume one: what the client said in initialize, its log level and
  // subscriptions, and which broker process serves it now. No secret: a
  // request still needs a bearer of the session's identity.
  `
  CREATE TABLE mcp_sessions (
    session_id TEXT PRIMARY KEY,
    identity_id TEXT NOT NULL,
    protocol_version TEXT NOT NULL,
    client_info_json TEXT NOT NULL,
    client_capabilities_json TEXT NOT NULL,
    log_level TEXT,
    subscriptions_json TEXT NOT NULL DEFAULT '[]',
    held_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL
  );
  CREATE INDEX mcp_sessions_held_by ON mcp_sessions(held_by);
  CREATE INDEX mcp_sessions_last_used ON mcp_sessions(last_used_at);
  `,
  // 10: a container's metrics history found by its name, without reading
  // every container's rows of the range (a 2,000-host fleet writes 24,000
  // container rows a minute).
  `
  CREATE INDEX metrics_name ON metrics(kind, name, minute);
  `,
  // 11: the brokers of a cluster, each with the bus keys it registered when it
  // started and the certificate the fleet CA gave the key that signs them
  // (null until the signing broker gives it): the only senders bus messages
  // are believed from.
  `
  CREATE TABLE brokers (
    broker_id TEXT PRIMARY KEY,
    public_key_pem TEXT NOT NULL,
    certificate_pem TEXT,
    signing_key TEXT NOT NULL,
    agreement_key TEXT NOT NULL,
    binding TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    stopped_at INTEGER,
    removed_at INTEGER
  );
  `,
  // 12: the fleet's certificate authorities, one active and, while a rotation
  // runs, the next one; their keys sealed with the operator's CA key secret
  // (never in clear: a single broker without a secret keeps them as files of
  // its data dir); which CA issued each agent certificate; and the lease of
  // the one broker of a cluster that signs.
  `
  CREATE TABLE certificate_authorities (
    pin TEXT PRIMARY KEY,
    certificate_pem TEXT NOT NULL,
    key_sealed TEXT,
    cross_certificate_pem TEXT,
    state TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    retired_at INTEGER
  );
  ALTER TABLE certificates ADD COLUMN ca_pin TEXT;
  CREATE TABLE ca_signer (
    id INTEGER PRIMARY KEY,
    broker_id TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  // 13: people signed in through OAuth, beside token identities: an identity
  // row per person (kind 'person', no usable secret) whose level, grants and
  // switched-off tools the operator's mapping rules decide at each request;
  // those rules, first match wins; who and which client each audit row is
  // for, and who approved it; the built-in authorization server's records
  // (clients, grants, codes, tokens, sessions, its keys) so that every broker
  // of a cluster serves one issuer; calls waiting for a second person's
  // approval; and a task waiting for it says so.
  `
  ALTER TABLE identities ADD COLUMN kind TEXT NOT NULL DEFAULT 'token';
  ALTER TABLE identities ADD COLUMN issuer TEXT;
  ALTER TABLE identities ADD COLUMN subject TEXT;
  ALTER TABLE identities ADD COLUMN email TEXT;
  ALTER TABLE identities ADD COLUMN tools_json TEXT NOT NULL DEFAULT '{}';

  CREATE TABLE identity_rules (
    id TEXT PRIMARY KEY,
    position INTEGER NOT NULL,
    issuer TEXT NOT NULL,
    match_json TEXT NOT NULL,
    level INTEGER NOT NULL,
    grants_json TEXT NOT NULL,
    tools_json TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );

  ALTER TABLE audit ADD COLUMN subject TEXT;
  ALTER TABLE audit ADD COLUMN email TEXT;
  ALTER TABLE audit ADD COLUMN client_id TEXT;
  ALTER TABLE audit ADD COLUMN approved_by TEXT;

  CREATE TABLE oauth_records (
    model TEXT NOT NULL,
    id TEXT NOT NULL,
    payload_json TEXT NOT NULL,
    grant_id TEXT,
    user_code TEXT,
    uid TEXT,
    expires_at INTEGER,
    consumed_at INTEGER,
    PRIMARY KEY (model, id)
  );
  CREATE INDEX oauth_records_grant ON oauth_records(grant_id);
  CREATE INDEX oauth_records_uid ON oauth_records(uid);
  CREATE INDEX oauth_records_expires ON oauth_records(expires_at);

  CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    call_id TEXT NOT NULL,
    identity_id TEXT NOT NULL,
    identity TEXT NOT NULL,
    subject TEXT,
    tool TEXT NOT NULL,
    action TEXT NOT NULL,
    level INTEGER NOT NULL,
    targets_json TEXT NOT NULL,
    arguments_json TEXT NOT NULL,
    arguments_sha256 TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    decided_by TEXT,
    decided_at INTEGER,
    reason TEXT
  );
  CREATE INDEX approvals_state ON approvals(state, created_at);

  ALTER TABLE mcp_tasks ADD COLUMN input_required INTEGER NOT NULL DEFAULT 0;
  `,
  // 14: the console's sign-ins, shared by every broker on the store, so a
  // console user stays signed in when a broker restarts or a request lands on
  // another one. The session id a browser's cookie holds is kept only as its
  // hash; the CSRF token is useless without it.
  `
  CREATE TABLE web_sessions (
    id_sha256 TEXT PRIMARY KEY,
    identity_id TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    origin TEXT NOT NULL,
    opened_at INTEGER NOT NULL,
    opened_seq INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX web_sessions_identity ON web_sessions(identity_id, opened_at);
  CREATE INDEX web_sessions_expires ON web_sessions(expires_at);
  `,
  // 15: the fullest disk of each host per minute, for the fleet's disk charts
  // (a container row leaves it null).
  `
  ALTER TABLE metrics ADD COLUMN disk_percent REAL;
  `,
  // 16: the agents' enrolment and revocation times indexed: every broker reads
  // the latest of each four times a second to notice what other processes
  // changed (dataVersion), which read every agent row without them (2.2 ms a
  // poll at 10,000 agents, 0.014 ms with them).
  `
  CREATE INDEX agents_enrolled ON agents(enrolled_at);
  CREATE INDEX agents_revoked ON agents(revoked_at);
  `,
];
