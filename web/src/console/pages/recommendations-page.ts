import { callOrThrow } from '../../call-tool.ts';
import { Recommendations, type RecommendationsAnswer } from '../../components/recommendations.ts';
import { h } from '../../dom.ts';
import type { Page, PageContext } from '../page.ts';

export function recommendationsPage(context: PageContext): Page {
  const view = new Recommendations();
  return {
    element: h('section', { class: 'page recommendations-page' }, h('h1', {}, 'Recommendations'), view.element),
    async refresh(uris) {
      if (uris.length && !uris.includes('fleet://recommendations')) return;
      view.update((await callOrThrow(context.call, 'get_recommendations', {})) as unknown as RecommendationsAnswer);
    },
  };
}
