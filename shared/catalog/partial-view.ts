/**
 * What one identity may see of the resources a read covers (one shared object),
 * decided resource by resource by the broker with the rule find and describe
 * apply. Resources are named by their index type and their id or name.
 */
export interface VisibleResources {
  sees(type: string, idOrName: string): boolean;
  /** How many resources of a type the identity sees. */
  count(type: string): number;
}

type Answer = Record<string, unknown>;

/**
 * How a read of many resources shows to an identity that may see only some of
 * them: it answers exactly what describe would show of the same resources, and
 * nothing of the rest. The broker applies it only when something is hidden.
 */
export interface PartialView {
  /**
   * Refuses parameters that name a resource the identity may not see, as if it
   * did not exist (`not_found`); `where` names the object for the message.
   */
  check?(params: Answer, visible: VisibleResources, where: string): void;
  /** The answer without anything about resources the identity may not see. */
  filter(answer: Answer, visible: VisibleResources): Answer;
}
