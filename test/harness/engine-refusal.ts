/** A refusal as docker-modem reports one from the engine: its status code and the engine's own message. */
export function engineRefusal(status: number, message: string): Error {
  return Object.assign(new Error(`(HTTP code ${status}) ${message}`), { statusCode: status, json: { message } });
}
