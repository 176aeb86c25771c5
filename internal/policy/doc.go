// Package policy decides which consequential actions a tool call takes: the
// rules live in code, a policy file only sets each rule's mode.
//
// # Model
//
// Analyze turns one tool call (Bash, Write, Edit, MultiEdit, NotebookEdit,
// Read, Grep, WebFetch, apply_patch, mcp__server__tool, ...) into Matches:
// the rules it triggers, each with a one-line reason. A match is either
// concrete or Unresolvable: the rule could apply but the deciding part of
// the call is only known at run time. Decide applies the modes of a Policy:
// any match of a gate-mode rule denies, else any match of a warn-mode rule
// warns, else the call is allowed. Unresolvable counts as a match, so a gate
// rule that cannot tell denies. Presenting an approval for a denied call is
// the hook's business, not this package's.
//
// Rules and what they match:
//
//   - self-mod (default gate): writes to agent settings (~/.claude/**,
//     ~/.claude.json, ~/.codex/**, ~/.gemini/**, any .claude/settings*.json,
//     .claude/hooks/**, .claude/agents/**, .claude/skills/** and
//     .claude/commands/** (a subagent's, skill's or command's frontmatter
//     can register hooks), .codex/**, .gemini/**, .mcp.json, .cursor/hooks.json,
//     other agents' project settings (opencode.json(c) and .opencode/**,
//     .aider.conf.yml, .continue/**, .kiro/settings/**, .kiro/hooks/**,
//     .kiro/agents/**, .roo/mcp.json),
//     the MCP servers .vscode/mcp.json and .cursor/mcp.json name, an
//     editor's workspace settings .vscode/settings.json and *.code-workspace
//     (Copilot's chat.tools.autoApprove lives there), the managed-settings directories /etc/claude-code, /etc/codex,
//     /etc/gemini-cli and macOS /Library/Application Support/ClaudeCode),
//     the global git configuration (~/.gitconfig and git config --global),
//     $FIXRAIL_HOME/** (policy.json, keys, nonces, receipts) and the fixrail
//     binary; any read of, or argument naming, a file under
//     $FIXRAIL_HOME/keys or a signing key the environment names
//     ($FIXRAIL_APPROVAL_KEY, $FIXRAIL_ATTEST_KEY: Env.SigningKeys), and a
//     write of one; a recursive operation on a directory that contains
//     any of these; a link to a protected file (a later edit of the link
//     would change it); a write to a hard link of a protected file; a tree
//     copied, moved or synced into place (cp -r, mv, rsync -a) that holds
//     a protected name, which lands where the tree does, and a link whose
//     own path completes one (ln -s DIR .claude: whatever DIR holds is the
//     project's settings); find -exec/-execdir running a command that
//     writes {}, for each protected file find could hand it below its
//     start that its -name/-iname tests let through (a zone's files, the
//     project's own protected names at the start's top); fixrail
//     approve, fixrail receipts checkpoint and repair, and ssh-keygen -Y
//     sign -n fixrail-approval.
//   - push-force: git push -f/--force/--force-with-lease/--force-if-includes
//     (clustered -fu, abbreviated --forc), a +refspec, --mirror, --prune;
//     gh api ref updates with force=true.
//   - push-protected: a push whose destination is a protected branch
//     (Env.ProtectedBranches, default main and master): main, HEAD:main,
//     refs/heads/main, heads/main, :main and --delete main, matching
//     refspecs ":" and wildcard destinations, --all, --mirror; a push with
//     no refspec when HEAD (read from the repository) is a protected branch;
//     gh api and MCP writes naming a protected branch.
//   - publish: gh pr merge, gh release, gh repo delete/visibility changes,
//     glab mr merge, npm/pnpm/yarn/bun publish and dist-tag, cargo publish,
//     twine upload, poetry/uv/flit/hatch/pdm publish, gem push, mvn deploy,
//     gradle publish*, dotnet nuget push, goreleaser release, helm push,
//     vsce/ovsx publish, docker/podman push and build --push, git push
//     --tags, pushing refs/tags/*, a version-like name (v1.2.3) or a tag
//     created earlier in the same command. Scripts and make targets whose
//     name contains publish/release/deploy/upload/ship are unresolvable.
//   - egress-other: curl/wget/httpie with a body or a non-GET method to a
//     host other than localhost, or a GET whose URL (curl -G's data, an
//     httpie query item) carries what a command printed — $(…), <(…), or a
//     variable assigned from one — which the request hands to the host;
//     ssh/scp/sftp/rsync to another host (a dry
//     run included: the peer gets the file list), nc and socat to a network
//     address (not nc -U or socat's UNIX-*/ABSTRACT-*, file, pipe or stdio
//     addresses, nor a TCP/UDP connect to the loopback; a socat address type
//     it does not know counts as network), telnet, openssl s_client, mail
//     senders, /dev/tcp redirections,
//     cloud uploads (aws s3 cp to s3://, gsutil, rclone), gh gist/secret and
//     file-body uploads, gh api writes, WebFetch with a non-GET method, DNS
//     lookups of names built at run time, and MCP tools named for writing or
//     sending (see mcp.go for the word lists).
//   - destructive: recursive deletes (rm -r, find -delete, find -exec rm,
//     rsync --delete, shred) whose target, after filepath.Clean, glob
//     components that can match "..", and symbolic links followed the way
//     the command follows them, lies outside Env.ScratchDirs; git clean -f,
//     git reset --hard, git checkout/restore of ".", git switch/checkout -f,
//     git stash drop/clear, git branch -D and its plumbing (git update-ref -d,
//     --stdin), git worktree remove --force
//     (outside scratch); disk and partition tools; terraform destroy,
//     kubectl delete and drain, helm uninstall, docker system/volume prune
//     and volume rm, cloud removals (bucket removal, aws delete-*/
//     terminate-*/remove-*, az ... delete/delete-*, gcloud ... delete), rsync
//     --remove-source-files, moving a file onto /dev/null, destructive SQL passed on a client's command line
//     (DROP, TRUNCATE, DELETE FROM, ALTER TABLE ... DROP, MongoDB drops and
//     deleteMany/deleteOne/remove, redis-cli DEL/UNLINK/FLUSH*); HTTP
//     requests that delete data in the service they reach, localhost
//     included (curl/wget/httpie: any DELETE; a URL naming a store's delete
//     operation — _delete_by_query, _purge, Solr's action=DELETE* and
//     UNLOAD with delete*=true, a POST to .../delete or .../drop; a
//     destructive SQL, InfluxQL or Cypher statement in a q/query/sql/stmt
//     parameter or a body; Solr's <delete> and {"delete": …}, _bulk delete
//     actions; a body read from a file is not read); MCP tools named for
//     deleting. rsync -n/--dry-run/--list-only deletes and writes nothing.
//   - scope-escalation: crontab, at/batch, systemctl enable/start/...,
//     loginctl enable-linger, launchctl load, service start, sudo/doas/su/
//     pkexec/run0 running a command, nohup, setsid, disown, daemonize,
//     systemd-run, tmux/screen/dtach/abduco detached sessions, pm2 start, docker run
//     --restart, a container given this machine's root (docker/podman run
//     --privileged, --pid/--userns=host, --cap-add SYS_ADMIN and kin, a
//     bind mount of /, /etc, the home directories or the engine's socket;
//     a writable bind mount of a protected zone or of a directory holding
//     one, judged under that zone's rule, self-mod for agent settings: see
//     containers.go),
//     git-hook managers installing hooks (pre-commit install, husky,
//     lefthook install, overcommit --install), setuid modes (chmod u+s, install -m 4755), setcap, user and
//     group administration, direnv allow, mise trust, repository git config keys that
//     run commands (alias.*, core.hooksPath, core.sshCommand, ...), starting
//     another agent without its controls (claude
//     --dangerously-skip-permissions/--bare/--settings, codex --yolo, gemini
//     --yolo), Bash with dangerouslyDisableSandbox, Cron* tools, and writes to
//     shell start-up files (with what zsh setups source: oh-my-zsh custom,
//     ~/.p10k.zsh, ~/.config/zsh; starship.toml), ~/.ssh, systemd/launchd/autostart directories,
//     ~/.local/bin, .git/hooks, .git/config, a worktree's config.worktree, a
//     submodule's repository (.git/modules/**), a commondir (git reads the
//     config and hooks of the directory it names), an interactive rebase's
//     state (.git/rebase-merge/**: rebase --continue runs its exec lines),
//     a .git file (it names the
//     repository git uses there), an archive with members unknown here
//     extracted below the project (a nested repository's config could
//     land), .envrc, mise's configuration
//     (mise.toml, mise.*.toml, .mise.toml, .mise/config.toml,
//     .config/mise.toml, .config/mise/**: trusted by path, so a trusted
//     file's later edits run on cd unasked), an editor's
//     .vscode/tasks.json (a task can run when the folder opens), a JetBrains
//     IDE's run configurations (.idea/workspace.xml,
//     .idea/runConfigurations/**, *.run.xml: startup tasks run them
//     when the project opens), a dev
//     container's .devcontainer.json and .devcontainer/** (initializeCommand
//     runs on this machine) and system directories
//     (/etc, /usr, /bin, /sbin, /lib*, /boot, /var/spool/cron).
//   - discard (default warn): git checkout and restore of named paths
//     (git checkout -- f, git checkout <rev> f, --pathspec-from-file, git
//     restore without --staged or with --worktree), --patch over the whole
//     tree, git reset --merge, and git rm --force (git rm refuses a file
//     with uncommitted changes without it; not --cached, not --dry-run):
//     they overwrite or delete uncommitted changes to those files ("." and
//     friends stay destructive). A repository in
//     scratch is exempt. The command line is read against git's own option
//     tables (gitopts.go): an option's value (--unified 3, --conflict merge,
//     --source HEAD~2) is not a revision or a path, abbreviations resolve as
//     git resolves them, and what git refuses before touching a file is
//     not a discard (-U/--inter-hunk-context without --patch; paths with
//     --track, --detach, -b/-B/--orphan).
//   - teardown (default warn): pulumi destroy and stack rm, terraform/
//     tofu/terragrunt apply -auto-approve (a plan applied unreviewed may
//     destroy), cdk destroy, serverless remove. terraform destroy and helm
//     uninstall stay destructive.
//   - data-drop (default warn): dropdb, mysqladmin drop, mongorestore
//     --drop; framework tasks that drop or empty a database (rails/rake
//     db:drop, db:reset, db:purge, db:schema:load, ...; manage.py and
//     django-admin flush/reset_db; artisan migrate:fresh/reset/refresh,
//     db:wipe; mix ecto.reset/drop/rollback; prisma migrate reset, db push
//     --force-reset), also through bundle exec; migration and database
//     tools' resets (supabase db reset, flyway clean, alembic downgrade
//     base, liquibase dropAll, sequelize db:drop and db:migrate:undo:all,
//     typeorm schema:drop, knex migrate:rollback --all, firebase
//     firestore:delete and database:remove); docker/podman compose
//     down -v and rm -v, docker rm -f/-v. It cannot see which database a
//     task points at (a test database is as gated as production) nor what a
//     make target or script runs.
//   - branch-delete (default warn): git push --delete and :branch refspecs
//     for branches that are not protected (those are push-protected).
//   - history-prune (default warn): git reflog expire --expire=now|all,
//     reflog delete, gc --prune=now, prune, filter-branch, filter-repo: they
//     remove what a lost commit is recovered from.
//   - spend: defined so a policy can name it, never matched: the cost of a
//     call cannot be told from its shape.
//
// # Shell analysis
//
// A Bash command is parsed with mvdan.cc/sh/v3 (bash dialect) and every
// command position is analysed: lists, pipes, subshells, blocks, if/while/
// for/case bodies, function bodies (where declared), command and process
// substitutions, and here-documents and here-strings fed to a shell. Words
// are expanded with the expand package against a synthetic environment that
// knows only HOME, TMPDIR (Env.TmpDir), PWD and variables assigned literally
// earlier in the same command (VAR=$(mktemp) counts as a temporary path);
// this canonicalises quote removal, ANSI-C quoting ($'\x72m'), escapes
// (\rm), empty quotes inside a word (r""m) and brace expansion. Anything
// else ($x, $IFS, $(...), $((...)), ~user) marks the word as run-time. A
// run-time command name is unresolvable for every rule; a run-time argument
// is unresolvable for the rules it matters to (a delete target, a write
// target, a refspec, a method). "cd DIR" is followed so relative paths
// resolve; an unknown directory leaves relative targets unresolvable. A
// for loop over at most 8 literal words is analysed once per word with the
// variable set. Branches that may not run (after || or a failed &&, inside
// if, loops and functions) forget what they change.
//
// Wrappers are unwrapped by table, one nesting level each: sudo, doas, su
// -c, runuser, pkexec, run0, env (assignments, -, -i, -u, -C, -S), command (not
// -v), builtin, exec, time, nohup, nice, ionice, chrt, timeout, stdbuf,
// setsid, flock, unbuffer, script -c, watch, xargs (read arguments become
// run-time words; -I, -i and BSD -J place them), parallel (its template read
// both as GNU parallel's shell text and, when it starts with a shell, as
// argv, so bash -c 'rm -rf {}' keeps its script whole), taskset, systemd-run, daemonize, caffeinate,
// chronic, proxychains, torsocks, fakeroot, faketime, strace, ltrace,
// ssh-agent, sg, busybox, chroot. Shell text is re-parsed and analysed from
// bash/sh/zsh/... -c, eval, trap, alias bodies, heredocs and here-strings
// into a shell, literal echo/printf/cat piped into a shell, env -S, find
// -exec, git -c alias.x=!..., git submodule foreach, git rebase --exec,
// tar --to-command, ssh's remote command (with paths taken as the remote
// host's) and ssh -o ProxyCommand. Absolute program paths reduce to their
// base name (/usr/bin/git, C:/Git/bin/git.exe). Nesting deeper than 8
// levels is unresolvable; so is text that does not parse (bash runs the
// lines before a syntax error, so a parse error is not "no match").
//
// A shell reading commands from the output of another command (curl ... |
// sh, base64 -d | bash) is unresolvable for every rule. A shell script run
// by path or by a shell is read when it is a regular file of at most 64 KiB,
// and what it visibly does counts, labelled with the file ("in ./deploy.sh:
// gh release create"); its own run-time values do not, because it is code
// outside the call like a Makefile (otherwise every wrapper script such as
// gradlew, which runs "$JAVACMD", would be unresolvable). A script written
// earlier in the same command is unresolvable; a larger or missing script
// is judged by its name like any program. source and . read the file (up to
// 256 KiB) the same way and are unresolvable when it cannot be read, except
// a virtualenv's bin/activate.
//
// git global options before the subcommand (-C, -c, --config-env,
// --git-dir, --work-tree, --namespace, --no-pager, ...) and GIT_DIR,
// GIT_WORK_TREE and GIT_CONFIG_COUNT/KEY/VALUE prefixes are understood;
// aliases given with -c or GIT_CONFIG_* are expanded. A subcommand git does
// not ship (it may be an alias from a config file) is unresolvable for
// push-force, push-protected, publish and destructive. git push --dry-run
// matches nothing.
//
// Interpreter one-liners (python -c, node -e, perl -e, ruby -e, php -r,
// awk programs, osascript -e) are not parsed as programs: their text is
// scanned for markers (subprocess, os.system, rmtree, requests.post, a
// protected path next to a write, ...) that make the matching rules
// unresolvable. perl -i, ruby -i and sed -i write their file operands.
//
// # Decisions
//
//   - The scratch allowlist (DefaultScratchDirs) is /tmp, /var/tmp, $TMPDIR
//     and, relative to the call's working directory, node_modules,
//     __pycache__, .pytest_cache, .mypy_cache, .ruff_cache and .tox. Build
//     outputs such as build/ and dist/ are not scratch by default: a
//     repository may keep sources there.
//   - git reset --hard and friends are destructive: they discard work that
//     no commit holds. git rm is not (the content stays in history).
//   - sudo and its relatives are scope-escalation in themselves, in addition
//     to whatever the command they run matches. A plain background job (&)
//     is not: starting a dev server for a test is routine; nohup, setsid,
//     disown and daemon managers are.
//   - Requests to localhost are not egress.
//   - A write target, delete target or script only known at run time is
//     unresolvable (for self-mod this denies by default): cmd > "$out" needs
//     an approval unless out was assigned a literal or $(mktemp) earlier in
//     the command.
//   - An unparseable Bash command is unresolvable for every rule but spend.
//   - PowerShell commands are not parsed and are unresolvable for every rule.
//
// # Known limits
//
// This is a pattern matcher over the shape of a call, and patterns are
// evadable; the threat it answers is an honest agent taking a consequential
// step without sign-off, not an adversary engineering around it.
//
//   - Run-time values are not known: what a variable holds, what a program
//     does, what a script fetched from the network contains. They surface as
//     Unresolvable, which is noisy by design.
//   - Code outside the call is trusted by name: make targets, npm scripts,
//     git hooks, programs on PATH (including a shim someone placed earlier),
//     aliases and functions from the user's shell profile (Claude Code
//     sources it into every Bash call), git aliases from config files, and
//     scripts larger than 64 KiB.
//   - git push without a refspec is judged by the checked-out branch only;
//     push.default, branch upstreams and remote.*.push from config files are
//     not resolved, and a repository whose default branch is not in
//     ProtectedBranches is not protected.
//   - Interpreter one-liners are keyword-scanned, not understood.
//   - Paths are compared as strings after Clean, symlink resolution of the
//     existing prefix, and case folding; a file reached through a bind mount,
//     /proc/self/root, or a hard link not made to one of the few files
//     checked by inode is not recognised. The file system may change between
//     the check and the run.
//   - zsh-only syntax (=cmd, glob qualifiers that run code) is parsed as bash.
//   - MCP tools are judged by their names.
//
// What a sandbox adds: this package decides intent before a call runs; it
// cannot contain what the call does. An OS sandbox (Claude Code's sandbox,
// bubblewrap, Seatbelt, a container) with writes limited to the project and
// scratch directories and network egress limited to an allowlist enforces
// at the system-call level whatever the command's spelling, so the two
// compose: the sandbox bounds the damage, this package asks for approval of
// the consequential steps the sandbox allows and leaves a receipt of each.
package policy
