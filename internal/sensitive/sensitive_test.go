package sensitive

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := New([]string{"src/**", "lib/**"}, []string{"billing/**", "src/tenancy/**"}, "tests/**")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestClassify(t *testing.T) {
	p := testPolicy(t)
	tests := []struct {
		name string
		path string
		want Verdict
	}{
		{"auth dir", "src/auth/session.py", Verdict{"src/auth/session.py", Denied, "word:auth"}},
		{"camel case", "src/AuthService.java", Verdict{"src/AuthService.java", Denied, "word:auth"}},
		{"lookalike residual", "lib/author.py", Verdict{"lib/author.py", Denied, "word:auth"}},
		{"oauth with digit", "src/oauth2_client.py", Verdict{"src/oauth2_client.py", Denied, "word:oauth"}},
		{"acronym then word", "src/HTTPAuthHandler.go", Verdict{"src/HTTPAuthHandler.go", Denied, "word:auth"}},
		{"upper case", "src/SECRETS/x.py", Verdict{"src/SECRETS/x.py", Denied, "word:secret"}},
		{"concatenated lower", "src/basicauth.py", Verdict{"src/basicauth.py", Denied, "word:auth"}},
		{"bcrypt", "src/hash/bcrypt.go", Verdict{"src/hash/bcrypt.go", Denied, "word:crypt"}},
		{"sso exact", "src/sso/login.py", Verdict{"src/sso/login.py", Denied, "word:sso"}},
		{"sso camel", "src/mySSOProvider.ts", Verdict{"src/mySSOProvider.ts", Denied, "word:sso"}},
		{"sso not inside word", "src/processor.py", Verdict{"src/processor.py", Fixable, "fixable:src/**"}},
		{"rls not inside urls", "src/urls.py", Verdict{"src/urls.py", Fixable, "fixable:src/**"}},
		{"insecure", "src/insecure_defaults.go", Verdict{"src/insecure_defaults.go", Denied, "word:secur"}},
		{"session is not a deny word", "src/web/session_cache.py", Verdict{"src/web/session_cache.py", Fixable, "fixable:src/**"}},
		{"fixable", "src/utils/format.py", Verdict{"src/utils/format.py", Fixable, "fixable:src/**"}},
		{"unknown", "docs/readme.md", Verdict{"docs/readme.md", Unknown, ""}},
		{"test glob", "tests/test_x.py", Verdict{"tests/test_x.py", Fixable, "test:tests/**"}},
		{"denied beats test glob", "tests/auth/test_login.py", Verdict{"tests/auth/test_login.py", Denied, "word:auth"}},
		{"config sensitive", "billing/invoice.py", Verdict{"billing/invoice.py", Denied, "config:paths.sensitive[0] billing/**"}},
		{"config sensitive beats fixable", "src/tenancy/scope.py", Verdict{"src/tenancy/scope.py", Denied, "config:paths.sensitive[1] src/tenancy/**"}},
		{"config sensitive case-insensitive", "Billing/Invoice.py", Verdict{"Billing/Invoice.py", Denied, "config:paths.sensitive[0] billing/**"}},
		{"dotenv", ".env.local", Verdict{".env.local", Denied, "glob:**/.env*"}},
		{"pem", "certs/server.pem", Verdict{"certs/server.pem", Denied, "glob:**/*.pem"}},
		{"github workflow", ".github/workflows/ci.yml", Verdict{".github/workflows/ci.yml", Denied, "glob:**/.github/**"}},
		{"github upper case", ".GitHub/workflows/ci.yml", Verdict{".GitHub/workflows/ci.yml", Denied, "glob:**/.github/**"}},
		{"manifest", "fixrail.yaml", Verdict{"fixrail.yaml", Denied, "glob:fixrail.yaml"}},
		{"fixrail state", ".fixrail/outbox/x.json", Verdict{".fixrail/outbox/x.json", Denied, "glob:.fixrail/**"}},
		{"migrations", "db/migrations/001.sql", Verdict{"db/migrations/001.sql", Denied, "word:migrat"}},
		{"agent instructions", "src/CLAUDE.md", Verdict{"src/CLAUDE.md", Denied, "glob:**/CLAUDE.md"}},
		{"git internals", "src/.git/config", Verdict{"src/.git/config", Denied, "glob:**/.git/**"}},
		{"cleaned", "./src//utils/./format.py", Verdict{"src/utils/format.py", Fixable, "fixable:src/**"}},
		{"dotdot", "../etc/passwd", Verdict{"../etc/passwd", Denied, "invalid-path"}},
		{"inner dotdot", "src/../fixrail.yaml", Verdict{"src/../fixrail.yaml", Denied, "invalid-path"}},
		{"absolute", "/abs", Verdict{"/abs", Denied, "invalid-path"}},
		{"backslash", `src\auth.py`, Verdict{`src\auth.py`, Denied, "invalid-path"}},
		{"nul", "src/a\x00.py", Verdict{"src/a\x00.py", Denied, "invalid-path"}},
		{"drive", "C:/x.py", Verdict{"C:/x.py", Denied, "invalid-path"}},
		{"empty", "", Verdict{"", Denied, "invalid-path"}},
		{"root", ".", Verdict{".", Denied, "invalid-path"}},
		{"dots in a name are fine", "src/a..b.py", Verdict{"src/a..b.py", Fixable, "fixable:src/**"}},
		// Names another file system opens as a denied path.
		{"ntfs trailing dot", "fixrail.yaml.", Verdict{"fixrail.yaml.", Denied, "alias:glob:fixrail.yaml (as fixrail.yaml)"}},
		{"ntfs trailing space", "src/.gitattributes ", Verdict{"src/.gitattributes ", Denied, "alias:glob:**/.gitattributes (as src/.gitattributes)"}},
		{"ntfs dir trailing dots", ".github../workflows/ci.yml", Verdict{".github../workflows/ci.yml", Denied, "alias:glob:**/.github/** (as .github/workflows/ci.yml)"}},
		{"ntfs data stream", "CLAUDE.md::$DATA", Verdict{"CLAUDE.md::$DATA", Denied, "alias:glob:**/CLAUDE.md (as CLAUDE.md)"}},
		{"ntfs short name", "GITATT~1", Verdict{"GITATT~1", Denied, "alias:ntfs-short-name GITATT~1"}},
		{"ntfs short name with extension", "src/CLAUDE~1.MD", Verdict{"src/CLAUDE~1.MD", Denied, "alias:ntfs-short-name CLAUDE~1.MD"}},
		{"hfs ignored code point", ".git\u200cattributes", Verdict{".git\u200cattributes", Denied, "alias:glob:**/.gitattributes (as .gitattributes)"}},
		{"hfs ignored inside a word", "src/pass\u200dword_reset.py", Verdict{"src/pass\u200dword_reset.py", Denied, "alias:word:password (as src/password_reset.py)"}},
		{"long s folds to s", ".claude/ſettings.json", Verdict{".claude/ſettings.json", Denied, "glob:**/.claude/**"}},
		{"long s in a deny glob", "src/.gitattributeſ", Verdict{"src/.gitattributeſ", Denied, "alias:glob:**/.gitattributes (as src/.gitattributes)"}},
		{"kelvin sign lowers to k", "certs/server.\u212aey", Verdict{"certs/server.\u212aey", Denied, "glob:**/*.key"}},
		{"segment only dots", "src/.../x.py", Verdict{"src/.../x.py", Denied, "alias:empty-segment"}},
		{"other unicode is not an alias", "src/café.py", Verdict{"src/café.py", Fixable, "fixable:src/**"}},
		{"a tilde without the short-name shape", "src/a~b.py", Verdict{"src/a~b.py", Fixable, "fixable:src/**"}},
		{"a colon naming no denied file", "src/12:30.py", Verdict{"src/12:30.py", Fixable, "fixable:src/**"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := p.Classify(tc.path)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Classify(%q) (-want +got):\n%s", tc.path, diff)
			}
			if want := tc.want.Class != Fixable; p.Sensitive(got) != want {
				t.Errorf("Sensitive(%v) = %v, want %v", got, !want, want)
			}
		})
	}
}

func TestClassifyNilPolicy(t *testing.T) {
	var p *Policy
	if got := p.Classify("src/x.py"); got.Class != Unknown {
		t.Errorf("nil policy: got %v, want unknown", got)
	}
	if got := p.Classify("src/auth.py"); got.Class != Denied {
		t.Errorf("nil policy: got %v, want denied", got)
	}
}

// A Policy built without New whose sensitive glob is malformed fails closed.
func TestClassifyBadSensitiveGlobFailsClosed(t *testing.T) {
	p := &Policy{Fixable: []string{"**"}, SensitiveGlobs: []string{"src/["}}
	if got := p.Classify("src/x.py"); got.Class != Denied {
		t.Errorf("got %v, want denied", got)
	}
}

func TestEveryDenyWordDeniesItself(t *testing.T) {
	p := &Policy{Fixable: []string{"**"}}
	for _, w := range DenyWords {
		for _, path := range []string{w, "src/" + w + "/x.go", "src/" + strings.ToUpper(w) + ".go"} {
			if got := p.Classify(path); got.Class != Denied {
				t.Errorf("Classify(%q) = %+v, want denied", path, got)
			}
		}
	}
}

func TestDenyListIsSuperset(t *testing.T) {
	p := &Policy{Fixable: []string{"**"}}
	// The floor the seed names: every hook token plus the added stems.
	for _, path := range []string{
		"auth", "credentials", "oauth", "oidc", "sso", "jwt", "saml", "secrets",
		"security", "encryption", "signing", "permissions", "authorization",
		"migrations", "rls", "crypto", "my_secret_file", "aws-credential.txt",
		"x.pem", "x.key", ".env", ".github/dependabot.yml",
	} {
		if got := p.Classify(path); got.Class != Denied {
			t.Errorf("Classify(%q) = %+v, want denied", path, got)
		}
	}
}

func TestExportedListsAreCopies(t *testing.T) {
	p := &Policy{Fixable: []string{"**"}}
	saveW, saveG := slices.Clone(DenyWords), slices.Clone(DenyGlobs)
	defer func() { DenyWords, DenyGlobs = saveW, saveG }()
	DenyWords = nil
	DenyGlobs = nil
	if got := p.Classify("src/auth.py"); got.Class != Denied {
		t.Errorf("clearing DenyWords changed classification: %+v", got)
	}
	if got := p.Classify("x.pem"); got.Class != Denied {
		t.Errorf("clearing DenyGlobs changed classification: %+v", got)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name                string
		fixable, sensitive  []string
		testGlob            string
		wantErr             string // substring; "" means no error
		wantPolicyFixable   []string
		wantPolicySensitive []string
	}{
		{name: "ok", fixable: []string{"src/**"}, sensitive: []string{"secure/**"}, testGlob: "tests/**",
			wantPolicyFixable: []string{"src/**"}, wantPolicySensitive: []string{"secure/**"}},
		{name: "bad fixable", fixable: []string{"src/**", "src/[a"}, wantErr: `paths.fixable[1] "src/[a"`},
		{name: "bad sensitive", sensitive: []string{"{a,b"}, wantErr: `paths.sensitive[0] "{a,b"`},
		{name: "bad test glob", testGlob: "tests/[", wantErr: `evidence glob "tests/["`},
		{name: "empty glob", sensitive: []string{""}, wantErr: `paths.sensitive[0] ""`},
		{name: "absolute glob", sensitive: []string{"/etc/**"}, wantErr: `paths.sensitive[0] "/etc/**"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.fixable, tc.sensitive, tc.testGlob)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New error = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPolicyFixable, p.Fixable); diff != "" {
				t.Errorf("Fixable (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPolicySensitive, p.SensitiveGlobs); diff != "" {
				t.Errorf("Sensitive (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClassString(t *testing.T) {
	for c, want := range map[Class]string{Fixable: "fixable", Denied: "denied", Unknown: "unknown", Class(9): "Class(9)"} {
		if got := c.String(); got != want {
			t.Errorf("Class(%d).String() = %q, want %q", int(c), got, want)
		}
	}
}

func TestTokens(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"AuthService.java", []string{"authservice", "auth", "service", "java"}},
		{"oauth2_client", []string{"oauth2", "client"}},
		{"oauth2Client", []string{"oauth2client", "oauth2", "client"}},
		{"HTTPAuth", []string{"httpauth", "http", "auth"}},
		{"JWTs", []string{"jwts", "jw", "ts"}},
		{"", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, tokens(tc.in)); diff != "" {
			t.Errorf("tokens(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
