import * as grpc from '@grpc/grpc-js';

/**
 * grpc-js logs to stderr by itself; every failure it reports reaches us as an
 * error we word better. Called by the commands that run a broker (the agent
 * speaks gRPC without grpc-js, and the other commands never load it, which
 * keeps them quick to start).
 */
export function quietGrpc(): void {
  grpc.setLogVerbosity(grpc.logVerbosity.NONE);
}
