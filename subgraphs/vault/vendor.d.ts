// The little of these untyped libraries that the Vault uses.
declare module 'wink-naive-bayes-text-classifier' {
  interface NaiveBayesTextClassifier {
    learn(input: string[], label: string): boolean;
    consolidate(): boolean;
    computeOdds(input: string[]): [string, number][];
    definePrepTasks(tasks: ((input: string[]) => string[])[]): number;
    defineConfig(config: { considerOnlyPresence?: boolean; smoothingFactor?: number }): boolean;
    exportJSON(): string;
    importJSON(json: string): boolean;
  }
  function naiveBayesTextClassifier(): NaiveBayesTextClassifier;
  export = naiveBayesTextClassifier;
}

declare module 'picomatch' {
  function picomatch(glob: string, options?: { nocase?: boolean; dot?: boolean }): (input: string) => boolean;
  export = picomatch;
}
