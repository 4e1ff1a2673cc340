import { Recommendations, type RecommendationsAnswer } from '../components/recommendations.ts';
import { h, replace } from '../dom.ts';
import type { Widget } from './widget.ts';

export function recommendationsWidget(): Widget {
  const element = h('div', { class: 'widget recommendations-widget' });
  return {
    element,
    show(answer) {
      if (answer.error) return replace(element, h('p', { class: 'widget-error' }, answer.error.message));
      const view = new Recommendations();
      view.update(answer.structured as unknown as RecommendationsAnswer);
      replace(element, view.element);
    },
  };
}
