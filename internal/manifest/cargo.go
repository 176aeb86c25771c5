package manifest

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// cargoOverrides are the places besides a dependency line and Cargo.lock
// that may decide which copy of crate cargo builds, where Cargo.lock still
// records the crates.io source (or records nothing yet, for a patch the bump
// would make apply): a [patch] or [replace] of the crate in any Cargo.toml,
// and in the Cargo configuration (.cargo/config.toml or .cargo/config) of
// each declaring manifest's directory and every directory above it in the
// repository, a source replacement (cargo vendor's
// [source.crates-io] replace-with = "vendored-sources"), a [patch] of the
// crate, `paths` overrides or an include. fixrail reads none of what they
// point at (a vendored copy may be old or edited, and no bump moves it), so
// each is blocked, named by file. The configuration outside the repository
// (CARGO_HOME, directories above the checkout) is not the repository's.
func cargoOverrides(root string, manifests []string, deps []Dep, crate string) []Blocked {
	var out []Blocked
	add := func(b Blocked) {
		for _, o := range out {
			if o == b {
				return
			}
		}
		out = append(out, b)
	}
	for _, m := range manifests {
		if path.Base(m) != "Cargo.toml" {
			continue
		}
		doc, err := readTOMLMap(root, m)
		if err != nil {
			continue // FindAll already blocks a manifest it cannot read
		}
		for _, why := range cargoPatches(doc, crate) {
			add(Blocked{File: m, Why: why})
		}
		if rep, ok := doc["replace"].(map[string]any); ok {
			for _, k := range sortedKeys(rep) {
				if replacesCrate(k, crate) {
					add(Blocked{File: m, Why: fmt.Sprintf("[replace] %q: cargo builds the replacement, not the registry's %s the advisories judge; fixrail does not read it", safeText(k), safeText(crate))})
				}
			}
		}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, d := range deps {
		if path.Base(d.Manifest) != "Cargo.toml" {
			continue
		}
		for dir := path.Dir(d.Manifest); ; dir = path.Dir(dir) {
			if !seen[dir] {
				seen[dir] = true
				dirs = append(dirs, dir)
			}
			if dir == "." || dir == "/" {
				break
			}
		}
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		for _, f := range []string{".cargo/config.toml", ".cargo/config"} {
			rel := path.Join(dir, f)
			// Present in any form (a link too): cargo would read it.
			if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err != nil {
				continue
			}
			doc, err := readTOMLMap(root, rel)
			if err != nil {
				add(Blocked{File: rel, Why: fmt.Sprintf("cargo's configuration may decide where %s comes from, and fixrail cannot read it: %v", safeText(crate), err)})
				continue
			}
			for _, why := range cargoConfig(doc, crate) {
				add(Blocked{File: rel, Why: why})
			}
		}
		// A vendor directory with no configuration here is built from by
		// configuration elsewhere (CI's --config, CARGO_HOME): why else
		// would it be kept.
		if v := vendoredCopy(root, path.Join(dir, "vendor"), crate); v != "" {
			add(Blocked{File: v, Why: fmt.Sprintf("a cargo vendor copy of %s: a build configured to use the vendor directory builds it, whatever Cargo.lock records; fixrail does not read it, and no bump moves it", safeText(crate))})
		}
	}
	return out
}

// maxVendorEntries bounds the read of a vendor directory.
const maxVendorEntries = 10000

// vendoredCopy is the first directory under vendor (cargo vendor's
// layout: NAME, or NAME-VERSION with --versioned-dirs or beside another
// version) that holds crate with its .cargo-checksum.json, or "".
func vendoredCopy(root, vendor, crate string) string {
	full := filepath.Join(root, filepath.FromSlash(vendor))
	if fi, err := os.Lstat(full); err != nil || !fi.IsDir() {
		return ""
	}
	f, err := os.Open(full)
	if err != nil {
		return ""
	}
	names, _ := f.Readdirnames(maxVendorEntries)
	f.Close()
	sort.Strings(names)
	for _, n := range names {
		rest, ok := "", cargoSame(n, crate)
		if !ok && len(n) > len(crate)+1 && cargoSame(n[:len(crate)], crate) && n[len(crate)] == '-' {
			rest = n[len(crate)+1:]
			ok = rest[0] >= '0' && rest[0] <= '9'
		}
		if !ok {
			continue
		}
		rel := path.Join(vendor, n)
		if _, err := os.Lstat(filepath.Join(full, n, ".cargo-checksum.json")); err == nil {
			return rel
		}
	}
	return ""
}

// cargoConfig says what in one Cargo configuration file may decide which
// copy of crate is built.
func cargoConfig(doc map[string]any, crate string) []string {
	var out []string
	if src, ok := doc["source"].(map[string]any); ok {
		for _, k := range sortedKeys(src) {
			t, _ := src[k].(map[string]any)
			with, ok := t["replace-with"]
			if !ok {
				// crates.io is not redefined but replaced; any other
				// setting of it is one fixrail does not know either.
				if k == "crates-io" {
					out = append(out, fmt.Sprintf("[source.crates-io] sets %s: it may change where cargo takes crates.io's crates (%s among them) from; fixrail does not read it", safeText(strings.Join(sortedKeys(t), ", ")), safeText(crate)))
				}
				continue
			}
			to := fmt.Sprintf("%v", with)
			if w, ok := with.(string); ok {
				if wt, ok := src[w].(map[string]any); ok {
					for _, kind := range []string{"directory", "local-registry", "registry", "git"} {
						if v, ok := wt[kind]; ok {
							to = fmt.Sprintf("%s (%s %v)", w, kind, v)
							break
						}
					}
				}
			}
			out = append(out, fmt.Sprintf("[source.%s] replace-with = %s: cargo builds that source's crates (%s among them) from the replacement while Cargo.lock still records the original source; fixrail does not read it, and no bump moves a vendored or mirrored copy", safeText(k), safeText(to), safeText(crate)))
		}
	}
	out = append(out, cargoPatches(doc, crate)...)
	if p, ok := doc["paths"]; ok {
		out = append(out, fmt.Sprintf("paths = %s: cargo builds a crate found there in place of the registry's (%s may be one); fixrail does not read them", safeText(fmt.Sprintf("%v", p)), safeText(crate)))
	}
	if inc, ok := doc["include"]; ok {
		out = append(out, fmt.Sprintf("include = %s: configuration fixrail does not follow may decide where %s comes from", safeText(fmt.Sprintf("%v", inc)), safeText(crate)))
	}
	return out
}

// cargoPatches names the [patch.<source>] entries of crate: keyed by its
// name, or renaming to it with package = "...".
func cargoPatches(doc map[string]any, crate string) []string {
	var out []string
	patch, _ := doc["patch"].(map[string]any)
	for _, src := range sortedKeys(patch) {
		entries, _ := patch[src].(map[string]any)
		for _, k := range sortedKeys(entries) {
			name := k
			if t, ok := entries[k].(map[string]any); ok {
				if p, ok := t["package"].(string); ok {
					name = p
				}
			}
			if cargoSame(k, crate) || cargoSame(name, crate) {
				out = append(out, fmt.Sprintf("[patch.%s] %s: cargo builds the patch, not the registry's %s the advisories judge, whatever version Cargo.lock records; fixrail does not read it", safeText(src), safeText(k), safeText(crate)))
			}
		}
	}
	return out
}

// replacesCrate reports whether a [replace] key, a package ID spec
// ("foo:1.2.3", "foo@1.2.3", "https://github.com/rust-lang/crates.io-index#foo@1.2.3"),
// may name crate: by its name part, or anywhere in a spec whose name
// part is not plain (a URL whose path names the crate).
func replacesCrate(spec, crate string) bool {
	s := spec
	if i := strings.LastIndexByte(s, '#'); i >= 0 {
		s = s[i+1:]
	}
	name, _, _ := strings.Cut(s, "@")
	name, _, _ = strings.Cut(name, ":")
	if cargoSame(name, crate) {
		return true
	}
	plain := name != "" && !strings.ContainsAny(name, "/.") && (name[0] < '0' || name[0] > '9')
	return !plain && strings.Contains(strings.ToLower(strings.ReplaceAll(spec, "_", "-")), strings.ToLower(strings.ReplaceAll(crate, "_", "-")))
}

// cargoSame: crates.io treats - and _ and case as one name.
func cargoSame(a, b string) bool {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "-")) }
	return norm(a) == norm(b)
}

func readTOMLMap(root, rel string) (map[string]any, error) {
	data, err := readIn(root, rel, MaxManifest)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := strictTOML(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrParse, rel, err)
	}
	return doc, nil
}
