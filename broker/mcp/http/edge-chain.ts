/**
 * One step of an HTTP edge, in the manner of a hono middleware: it answers
 * the request itself, or hands it to the next step, perhaps with more known
 * of it (`Out`: the identity a token proved, the body read).
 */
export type EdgeStep<In, Out = In> = (exchange: In, next: (exchange: Out) => Promise<void>) => Promise<void>;

/**
 * Steps chained in order, typed so that a step reads only what the steps
 * before it established: `EdgeChain.start<Exchange>().use(a).use(b).end(last)`
 * is the handler that runs a, then b, then last, each only if the one before
 * handed the request on.
 */
export class EdgeChain<In, Current> {
  private constructor(private readonly run: (exchange: In, last: (exchange: Current) => Promise<void>) => Promise<void>) {}

  static start<X>(): EdgeChain<X, X> {
    return new EdgeChain<X, X>((exchange, last) => last(exchange));
  }

  use<Out>(step: EdgeStep<Current, Out>): EdgeChain<In, Out> {
    return new EdgeChain<In, Out>((exchange, last) => this.run(exchange, (current) => step(current, last)));
  }

  /** The handler: every step, then `last` for what all of them handed on. */
  end(last: (exchange: Current) => Promise<void>): (exchange: In) => Promise<void> {
    return (exchange) => this.run(exchange, last);
  }
}
