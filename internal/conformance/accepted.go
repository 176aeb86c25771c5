package conformance

import (
	"strings"

	"github.com/rhysd/actionlint"
	"go.yaml.in/yaml/v3"
)

// githubAccepted drops the parse errors actionlint reports for keys that
// GitHub's own workflow schema accepts and actionlint's does not know yet
// (actions/languageservices, workflow-parser/src/workflow-v1.0.json:
// workflow-root and concurrency-mapping): a top-level description, whose
// value is a string (the schema's workflow-description), and concurrency's
// queue, single or max (concurrency-queue), at the workflow's level or a
// job's. Those are the only keys the two schemas differ on at those
// places; every other unknown key is one GitHub refuses as well and stays
// unparseable. Each error is checked against the YAML itself: it must sit
// on such a key, in such a place, with such a value.
//
// Most files that have such keys are in plain block style, and then the
// keys' own lines answer (acceptedFromLines); any other file is parsed
// again whole (acceptedFromParse).
func githubAccepted(src []byte, errs []*actionlint.Error) []*actionlint.Error {
	var keyErrs []*actionlint.Error
	for _, e := range errs {
		if isKeyErr(e) {
			keyErrs = append(keyErrs, e)
		}
	}
	if len(keyErrs) == 0 {
		return errs
	}
	if accepted, ok := acceptedFromLines(src, keyErrs); ok {
		out := errs[:0:0]
		for _, e := range errs {
			if !accepted[e] {
				out = append(out, e)
			}
		}
		return out
	}
	return acceptedFromParse(src, errs, keyErrs)
}

func isKeyErr(e *actionlint.Error) bool {
	return strings.HasPrefix(e.Message, `unexpected key "description" for "workflow" section`) ||
		strings.HasPrefix(e.Message, `unexpected key "queue" for "concurrency" section`)
}

// acceptedFromParse is githubAccepted by the whole file parsed again.
func acceptedFromParse(src []byte, errs, keyErrs []*actionlint.Error) []*actionlint.Error {
	var doc yaml.Node
	if yaml.Unmarshal(src, &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return errs
	}
	root := doc.Content[0]
	accepted := map[[2]int]bool{}
	if k, v := mappingKey(root, "description"); k != nil && stringScalar(v) {
		accepted[[2]int{k.Line, k.Column}] = true
	}
	queueOK := func(conc *yaml.Node) {
		if k, v := mappingKey(conc, "queue"); k != nil && stringScalar(v) && (v.Value == "single" || v.Value == "max") {
			accepted[[2]int{k.Line, k.Column}] = true
		}
	}
	_, conc := mappingKey(root, "concurrency")
	queueOK(conc)
	if _, jobs := mappingKey(root, "jobs"); jobs != nil && jobs.Kind == yaml.MappingNode {
		for i := 1; i < len(jobs.Content); i += 2 {
			_, c := mappingKey(jobs.Content[i], "concurrency")
			queueOK(c)
		}
	}
	out := errs[:0:0]
	for _, e := range errs {
		if !(accepted[[2]int{e.Line, e.Column}] && containsErr(keyErrs, e)) {
			out = append(out, e)
		}
	}
	return out
}

// mappingKey returns the key and value nodes of name in a mapping node.
func mappingKey(m *yaml.Node, name string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Kind == yaml.ScalarNode && m.Content[i].Value == name {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func stringScalar(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str"
}

func containsErr(errs []*actionlint.Error, e *actionlint.Error) bool {
	for _, x := range errs {
		if x == e {
			return true
		}
	}
	return false
}
