import { placeholders, type SqlValue } from './sql-engine.ts';

/** Which brokers' rows a cluster-wide settling touches: those named, or those not among the brokers still alive. */
export interface BrokerScope {
  brokerIds?: readonly string[];
  except?: readonly string[];
}

/**
 * Adds the `broker_id` conditions of a scope to a WHERE list and its
 * arguments. False when the scope names no broker at all, so nothing matches
 * and the statement need not run.
 */
export function whereBrokers(scope: BrokerScope, where: string[], args: SqlValue[]): boolean {
  if (scope.brokerIds) {
    if (scope.brokerIds.length === 0) return false;
    where.push(`broker_id IN (${placeholders(scope.brokerIds.length)})`);
    args.push(...scope.brokerIds);
  }
  if (scope.except) {
    where.push(`broker_id IS NOT NULL${scope.except.map(() => ' AND broker_id <> ?').join('')}`);
    args.push(...scope.except);
  }
  return true;
}
