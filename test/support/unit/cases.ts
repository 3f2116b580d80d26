/**
 * For spec tables written by outcome: `{ loopback: ['127.0.0.1', '::1'], private: ['10.0.0.1'] }`
 * reads as "these inputs are refused as loopback, these as private" and keeps a long list of
 * inputs on a few lines. Expanded here into the `[input, outcome]` rows `it.each` takes, one
 * test case per input, in the order written.
 */
export function casesByOutcome<Outcome extends string, Input>(groups: Readonly<Record<Outcome, readonly Input[]>>): [Input, Outcome][] {
  return (Object.entries(groups) as [Outcome, readonly Input[]][]).flatMap(([outcome, inputs]) => inputs.map((input): [Input, Outcome] => [input, outcome]));
}
