import type { Domain } from '../domain.ts';
import { composeDown, composePull, composeUp } from './compose-actions.ts';
import { imageList, imagePrune, imagePull } from './image-actions.ts';
import { rolloutHead } from './rollout-head.ts';
import { containerUpdateImage } from './update-actions.ts';

/** The rollout domain whole: its head (what an agent reads at start) with its actions and report schemas. */
export const rolloutDomain = {
  ...rolloutHead,
  actions: [imageList, imagePull, imagePrune, containerUpdateImage, composePull, composeUp, composeDown],
  reports: {},
} as const satisfies Domain;
