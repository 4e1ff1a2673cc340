import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OAuthRecord, OAuthRecordsTable } from '../store/oauth-records-table.ts';

function payloadOf(record: OAuthRecord | undefined): AdapterPayload | undefined {
  if (!record) return undefined;
  return { ...record.payload, ...(record.consumedAt !== null ? { consumed: Math.floor(record.consumedAt / 1000) } : {}) } as AdapterPayload;
}

/**
 * oidc-provider's storage, one model (Client, Grant, AuthorizationCode,
 * RefreshToken, Session, Interaction, …) per instance, on the broker's store:
 * what one broker of a cluster issues, every other one finds.
 */
export class StoreAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly records: OAuthRecordsTable,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn: number | undefined): Promise<void> {
    await this.records.upsert(this.model, id, payload as Record<string, unknown>, expiresIn ? Date.now() + expiresIn * 1000 : null);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return payloadOf(await this.records.find(this.model, id, Date.now()));
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return payloadOf(await this.records.findBy(this.model, 'user_code', userCode, Date.now()));
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return payloadOf(await this.records.findBy(this.model, 'uid', uid, Date.now()));
  }

  async consume(id: string): Promise<void> {
    await this.records.consume(this.model, id, Date.now());
  }

  async destroy(id: string): Promise<void> {
    await this.records.destroy(this.model, id);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.records.revokeByGrantId(grantId);
  }
}
