/** `topod completion bash|zsh`: the shell completion script for this CLI, from its own commands and options. */
import { Argument, Command } from 'commander';
import { completionScript, SHELLS, type Shell } from '../completion.js';
import type { CliContext } from '../context.js';

export function completionCommand(cli: CliContext): Command {
  return new Command('completion')
    .description('print the shell completion script: source <(topod completion bash), or zsh')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .action((shell: Shell, _options: unknown, self: Command) => {
      const root = self.parent ?? self;
      cli.io.stdout.write(completionScript(root, shell));
    });
}
