package policy

import (
	"path/filepath"
	"slices"
	"strings"
)

// The rules of this file cover moves users expect a guard to stop on their
// own machine and that dcg and safety-net block by default: they lose work
// or data that no commit, backup or reflog holds. They start in warn (see
// DefaultModes); the commands are matched by name and subcommand, so what a
// make target, a script or an alias does is not seen (package doc, Known
// limits).

// pulumi: destroy and stack rm remove a stack's resources or its state.
func (a *analyzer) pulumi(c *cmd) {
	ops := parseOpts(c.args, optSpec{short: "sC", long: []string{"stack", "cwd", "color", "config-file", "target", "parallel", "message"}}).operands
	switch {
	case len(ops) > 0 && ops[0].s == "destroy":
		a.add(Teardown, false, "pulumi destroy deletes a stack's resources")
	case len(ops) > 1 && ops[0].s == "stack" && ops[1].s == "rm":
		a.add(Teardown, false, "pulumi stack rm deletes a stack")
	case len(ops) > 0 && (ops[0].s == "up" || ops[0].s == "update") && (hasField(c.args, "--yes") || hasField(c.args, "-y") || hasField(c.args, "--skip-preview") || hasField(c.args, "-f")):
		// terraform apply -auto-approve's analog: the plan is not shown
		// before it is carried out, deletions included.
		a.add(Teardown, false, "pulumi %s applies the stack's changes without a preview to approve", ops[0].s)
	}
}

// bfg is the BFG Repo-Cleaner (bfg, or java -jar bfg-*.jar): it rewrites
// every commit to drop files or blobs, as git filter-repo does.
func (a *analyzer) bfg(c *cmd) {
	if hasField(c.args, "--help") || hasField(c.args, "--version") {
		return
	}
	a.add(HistoryPrune, false, "bfg rewrites the repository's history")
}

// java: java -jar bfg*.jar is the BFG Repo-Cleaner.
func (a *analyzer) java(c *cmd) {
	for i, f := range c.args {
		if f.s == "-jar" && i+1 < len(c.args) && !c.args[i+1].dyn &&
			strings.HasPrefix(strings.ToLower(filepath.Base(c.args[i+1].s)), "bfg") {
			a.bfg(&cmd{name: "bfg", args: c.args[i+2:], st: c.st})
			return
		}
	}
}

// paas judges platform CLIs' deletions: an app, a volume or a site removed
// with its data (fly, heroku, vercel, netlify), and heroku pg:reset, which
// empties the database.
func (a *analyzer) paas(c *cmd) {
	ops := statics(parseOpts(c.args, optSpec{short: "aAr", long: []string{"app", "remote", "team", "scope", "token", "config", "org", "site", "confirm"}}).operands)
	if len(ops) == 0 {
		return
	}
	verb := strings.Join(ops[:min(2, len(ops))], " ")
	switch {
	case c.name == "heroku" && (ops[0] == "pg:reset" || ops[0] == "redis:reset"):
		a.add(DataDrop, false, "heroku %s empties the database", ops[0])
	case c.name == "heroku" && (ops[0] == "apps:destroy" || ops[0] == "destroy" || ops[0] == "addons:destroy" || ops[0] == "pg:destroy"):
		a.add(Destructive, false, "heroku %s deletes it with its data", ops[0])
	case (c.name == "fly" || c.name == "flyctl") && (ops[0] == "destroy" || len(ops) > 1 && ops[1] == "destroy"):
		a.add(Destructive, false, "%s %s deletes it with its data", c.name, verb)
	case c.name == "vercel" && (ops[0] == "remove" || ops[0] == "rm"),
		c.name == "netlify" && ops[0] == "sites:delete":
		a.add(Destructive, false, "%s %s deletes the deployment", c.name, ops[0])
	}
}

// cdk destroy and serverless remove delete deployed stacks.
func (a *analyzer) cdk(c *cmd) {
	ops := parseOpts(c.args, optSpec{short: "ac", long: []string{"app", "context", "profile", "output", "role-arn"}}).operands
	if len(ops) > 0 && (ops[0].s == "destroy" || ops[0].s == "remove") {
		a.add(Teardown, false, "%s %s deletes deployed stacks", c.name, ops[0].s)
	}
}

// infraDelete: deployment tools whose destroy, remove or delete verb (first
// or, for copilot's app/env/svc/job, second word) deletes what they deployed:
// cdktf destroy, sst remove, sam delete, helmfile destroy, copilot svc
// delete, eksctl delete cluster, amplify delete.
func (a *analyzer) infraDelete(c *cmd) {
	if hasField(c.args, "--dry-run") {
		return
	}
	words := statics(parseOpts(c.args, optSpec{long: []string{"profile", "region", "stage", "app", "env", "name",
		"file", "environment", "stack-name", "config-file"}}).operands)
	for i, w := range words {
		if i > 1 {
			break
		}
		if w == "destroy" || w == "remove" || w == "delete" {
			a.add(Teardown, false, "%s %s deletes deployed infrastructure", c.name, strings.Join(words[:i+1], " "))
			return
		}
	}
}

// dropdb drops a PostgreSQL database.
func (a *analyzer) dropdb(c *cmd) {
	if parseOpts(c.args, optSpec{}).has("--help", "-?", "--version", "-V") {
		return
	}
	a.add(DataDrop, false, "dropdb drops a database")
}

// mysqladmin drop DB drops a database.
func (a *analyzer) mysqladmin(c *cmd) {
	ops := parseOpts(c.args, optSpec{short: "hPuSp", long: []string{"host", "port", "user", "socket", "password", "defaults-file"}}).operands
	for _, f := range ops {
		if f.s == "drop" {
			a.add(DataDrop, false, "mysqladmin drop drops a database")
		}
	}
}

// mongorestore --drop drops each collection before restoring it.
func (a *analyzer) mongorestore(c *cmd) {
	if hasField(c.args, "--drop") {
		a.add(DataDrop, false, "mongorestore --drop drops collections before restoring")
	}
}

// migrationResets are the subcommands of database and migration tools that
// drop or empty a database (or every object in its schemas), as word runs
// found anywhere among the operands (an option's value may stand before
// them: alembic -c alembic.ini downgrade base).
var migrationResets = map[string][][]string{
	"supabase":      {{"db", "reset"}},
	"flyway":        {{"clean"}},
	"alembic":       {{"downgrade", "base"}},
	"liquibase":     {{"dropall"}, {"drop-all"}},
	"sequelize":     {{"db:drop"}, {"db:migrate:undo:all"}},
	"sequelize-cli": {{"db:drop"}, {"db:migrate:undo:all"}},
	"typeorm":       {{"schema:drop"}},
	"firebase":      {{"firestore:delete"}, {"database:remove"}},
	"dbmate":        {{"drop"}},
	"goose":         {{"reset"}, {"down-to", "0"}},
	"migrate":       {{"drop"}},
}

// storeDeletes are the subcommands of data stores' CLIs that delete data
// wholesale — a bucket, a key prefix, a secret's every version, a dataset
// — as operand runs, each with the option that makes it wholesale when one
// is needed ("" for none).
var storeDeletes = map[string][]struct {
	run  []string
	flag string
}{
	"influx":  {{[]string{"bucket", "delete"}, ""}, {[]string{"delete"}, ""}},
	"etcdctl": {{[]string{"del"}, "--prefix"}, {[]string{"del"}, "--from-key"}},
	"consul":  {{[]string{"kv", "delete"}, "-recurse"}},
	"vault": {{[]string{"kv", "destroy"}, ""}, {[]string{"kv", "metadata", "delete"}, ""}, {[]string{"secrets", "disable"}, ""},
		{[]string{"auth", "disable"}, ""}, {[]string{"policy", "delete"}, ""}}, // an engine's, a method's data and config go with it
	"bq": {{[]string{"rm"}, ""}},
}

// storeDelete reports a data store CLI deleting data wholesale
// (storeDeletes).
func (a *analyzer) storeDelete(c *cmd) {
	var words []string
	for _, f := range c.args {
		if !strings.HasPrefix(f.s, "-") {
			words = append(words, f.s)
		}
	}
	for _, d := range storeDeletes[c.name] {
		if len(words) >= len(d.run) && slices.Equal(words[:len(d.run)], d.run) && (d.flag == "" || hasPrefixField(c.args, d.flag)) {
			a.add(Destructive, false, "%s %s deletes the store's data", c.name, strings.Join(d.run, " "))
			return
		}
	}
}

// migrationReset reports a database or migration tool's subcommand that
// drops or empties the database (migrationResets); knex's migrate:rollback
// counts with --all, which undoes every migration.
func (a *analyzer) migrationReset(c *cmd) {
	ops := parseOpts(c.args, optSpec{}).operands
	words := make([]string, 0, len(ops))
	for _, f := range ops {
		words = append(words, strings.ToLower(f.s))
	}
	runs := migrationResets[c.name]
	if c.name == "knex" && hasField(c.args, "--all") {
		runs = [][]string{{"migrate:rollback"}}
	}
	for _, run := range runs {
		for i := 0; i+len(run) <= len(words); i++ {
			if slices.Equal(words[i:i+len(run)], run) {
				a.add(DataDrop, false, "%s %s drops or empties the database", c.name, strings.Join(run, " "))
				return
			}
		}
	}
}

// frameworkResets are framework tasks that drop or empty a database.
var frameworkResets = map[string]wordSet{
	"rails":   wordSet{"db:drop", "db:reset", "db:purge", "db:schema:load", "db:migrate:reset", "db:truncate_all", "db:seed:replant", "db:drop:all", "db:reset:all", "db:purge:all"},
	"django":  wordSet{"flush", "reset_db"},
	"artisan": wordSet{"migrate:fresh", "migrate:reset", "migrate:refresh", "db:wipe"},
	"mix":     wordSet{"ecto.reset", "ecto.drop", "ecto.rollback"},
}

// frameworkTask reports a framework task that resets a database; for
// django also migrate APP zero, which unapplies every migration of the app
// (dropping its tables).
func (a *analyzer) frameworkTask(kind string, tasks []field, tool string) {
	if kind == "django" && len(tasks) >= 3 && tasks[0].s == "migrate" && tasks[2].s == "zero" {
		a.add(DataDrop, false, "%s migrate %s zero unapplies every migration of the app", tool, tasks[1].s)
	}
	for _, t := range tasks {
		if t.dyn {
			continue
		}
		task := t.s
		if i := strings.IndexByte(task, '['); i > 0 {
			task = task[:i] // rake db:drop[args]
		}
		if frameworkResets[kind].has(task) {
			a.add(DataDrop, false, "%s %s drops or empties the database", tool, task)
		}
	}
}

// rails and rake: every operand is a task (rails db:reset, rake db:drop).
func (a *analyzer) rails(c *cmd) {
	a.frameworkTask("rails", parseOpts(c.args, optSpec{short: "ef", long: []string{"environment", "rakefile"}}).operands, c.name)
}

// rake also runs publish-like task names (taskRunner).
func (a *analyzer) rake(c *cmd) {
	a.taskRunner(c)
	a.rails(c)
}

// mix: ecto.reset and ecto.drop; hex.publish is publish.
func (a *analyzer) mix(c *cmd) {
	publishVerbs(map[string]bool{"hex.publish": true})(a, c)
	a.frameworkTask("mix", parseOpts(c.args, optSpec{}).operands, "mix")
}

// prisma migrate reset and db push --force-reset empty the database.
func (a *analyzer) prisma(c *cmd) {
	ops := parseOpts(c.args, optSpec{long: []string{"schema"}}).operands
	if len(ops) > 1 && ops[0].s == "migrate" && ops[1].s == "reset" ||
		len(ops) > 1 && ops[0].s == "db" && ops[1].s == "push" && hasField(c.args, "--force-reset") {
		a.add(DataDrop, false, "prisma %s %s empties the database", ops[0].s, ops[1].s)
	}
}

// djangoAdmin: django-admin flush, and python manage.py flush (see python).
func (a *analyzer) djangoAdmin(c *cmd) {
	a.frameworkTask("django", parseOpts(c.args, optSpec{long: []string{"settings", "pythonpath", "database", "verbosity"}}).operands, c.name)
}

// scriptTask judges what a known framework entry script does with its
// arguments: manage.py flush, artisan migrate:fresh.
func (a *analyzer) scriptTask(script field, rest []field) {
	if script.dyn {
		return
	}
	switch filepath.Base(script.s) {
	case "manage.py":
		a.frameworkTask("django", parseOpts(rest, optSpec{long: []string{"settings", "pythonpath", "database", "verbosity"}}).operands, "manage.py")
	case "artisan":
		a.frameworkTask("artisan", parseOpts(rest, optSpec{long: []string{"env", "database"}}).operands, "artisan")
	case "setup.py":
		// distutils commands run in order: upload and register send the
		// package to an index.
		for _, f := range rest {
			if !f.dyn && (f.s == "upload" || f.s == "register") {
				a.add(Publish, false, "setup.py %s sends the package to an index", f.s)
			}
		}
	}
}

// compose: docker compose down -v and rm -v delete the project's volumes.
func (a *analyzer) compose(c *cmd, args []field) {
	i := firstOperand(args, "fp", []string{"file", "project-name", "profile", "env-file", "project-directory", "ansi", "progress", "parallel"})
	if i < 0 {
		return
	}
	sub, rest := args[i].s, args[i+1:]
	p := parseOpts(rest, optSpec{short: "t", long: []string{"timeout", "rmi"}})
	if (sub == "down" || sub == "rm") && p.has("-v", "--volumes") {
		a.add(DataDrop, false, "compose %s --volumes deletes the project's volumes", sub)
	}
}

// dockerCompose is the standalone docker-compose.
func (a *analyzer) dockerCompose(c *cmd) { a.compose(c, c.args) }

// dockerData: compose volumes, and docker rm -f / -v, which remove a
// running container's writable layer or its anonymous volumes.
func (a *analyzer) dockerData(c *cmd, sub, next string, rest []field) {
	switch {
	case sub == "compose":
		a.compose(c, rest)
	case sub == "rm" || sub == "container" && next == "rm":
		if sub == "container" {
			rest = rest[1:]
		}
		p := parseOpts(rest, optSpec{})
		if p.has("-f", "--force", "-v", "--volumes") {
			a.add(DataDrop, false, "%s rm --force/--volumes deletes a container's data", c.name)
		}
	}
}

// gitDiscard reports a git command that overwrites uncommitted changes in
// the work tree (outside scratch), like gitDestroys does for destructive.
func (a *analyzer) gitDiscard(g *gitCtx, why string, unresolvable bool) {
	if g.dir == "" {
		a.add(Discard, true, "%s; the repository directory is unknown", why)
		return
	}
	if a.inScratch(a.resolve(g.dir)) {
		return
	}
	a.add(Discard, unresolvable, "%s in %s", why, g.dir)
}

// gitReflog: reflog expire with an expiry of now (or all) and reflog delete
// remove the entries that undo a bad reset or rebase.
func (a *analyzer) gitReflog(rest []field) {
	if len(rest) == 0 {
		return
	}
	switch rest[0].s {
	case "delete":
		a.add(HistoryPrune, false, "git reflog delete removes recovery points")
	case "expire":
		for _, f := range rest[1:] {
			if v, ok := cutAny(f.s, "--expire=", "--expire-unreachable="); ok && expiresNow(v) || f.dyn {
				a.add(HistoryPrune, f.dyn, "git reflog expire %s removes recovery points", f)
				return
			}
		}
	}
}

// gitGC: gc --prune=now and prune delete unreachable objects at once,
// which are what a lost commit is recovered from.
func (a *analyzer) gitGC(sub string, rest []field) {
	if sub == "prune" {
		if !hasField(rest, "-n") && !hasField(rest, "--dry-run") {
			a.add(HistoryPrune, false, "git prune deletes unreachable objects")
		}
		return
	}
	for _, f := range rest {
		if v, ok := cutAny(f.s, "--prune="); ok && expiresNow(v) {
			a.add(HistoryPrune, false, "git gc %s deletes unreachable objects now", f.s)
		}
	}
}

func cutAny(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if v, ok := strings.CutPrefix(s, p); ok {
			return v, true
		}
	}
	return "", false
}

// expiresNow reports whether a git expiry date means "everything".
func expiresNow(v string) bool {
	v = strings.ToLower(strings.Trim(v, `"'`))
	return v == "now" || v == "all" || v == "0"
}

// bundle exec runs its command with the bundle's gems: judged as the
// command (rake db:drop, rails db:reset, gem push).
func (a *analyzer) bundle(c *cmd) {
	ops := parseOpts(c.args, optSpec{posix: true, long: []string{"gemfile"}}).operands
	if len(ops) > 1 && ops[0].s == "exec" {
		a.command(ops[1:], c.env, c.st, c.in, c.depth+1)
	}
}
