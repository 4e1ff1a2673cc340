import type * as grpc from '@grpc/grpc-js';

/**
 * The baseline the mesh is measured against: one bare grpc-js bidirectional
 * stream per client, raw bytes both ways, no protobuf, no session, no registry.
 */
export const ECHO_SERVICE: grpc.ServiceDefinition = {
  stream: {
    path: '/fleetmesh.bench.Echo/Stream',
    requestStream: true,
    responseStream: true,
    requestSerialize: (bytes: Buffer) => bytes,
    requestDeserialize: (bytes: Buffer) => bytes,
    responseSerialize: (bytes: Buffer) => bytes,
    responseDeserialize: (bytes: Buffer) => bytes,
  },
};

/** About the size of an encoded agent.info Call frame and of its Result, so both sides move the same bytes. */
export const ECHO_CALL_BYTES = 120;
export const ECHO_REPLY_BYTES = 900;
