package policy

import (
	"net/url"
	"strings"
)

// httpDeleteVerbs are last path segments that name a delete operation in
// the RPC-style APIs of data stores, where the method is POST: Qdrant's
// /collections/c/points/delete, Milvus's /v2/vectordb/collections/drop,
// InfluxDB's /api/v2/delete, Elasticsearch and OpenSearch's
// /index/_delete_by_query, CouchDB's /db/_purge.
var httpDeleteVerbs = wordSet{"delete", "drop", "truncate", "purge", "_purge", "_delete_by_query"}

// httpQueryText are query parameters that carry a statement to a store
// that speaks SQL or a query language over HTTP: ClickHouse (query),
// InfluxDB 1.x (q), CrateDB and others (stmt, sql).
var httpQueryText = []string{"q", "query", "sql", "stmt", "statement"}

// httpBodyDeletes are the delete commands of stores whose update endpoint
// takes a list of operations: Solr's XML <delete> and JSON {"delete": …},
// Elasticsearch and OpenSearch _bulk's {"delete": {…}} action lines.
var httpBodyDeletes = lazy(`(?i)<delete[\s>]|"delete"\s*:\s*[\{\["]`)

// cypherDelete is Neo4j's delete clause, sent over its HTTP API in a JSON
// body: MATCH (n) DETACH DELETE n, MATCH (n:User) DELETE n.
var cypherDelete = lazy(`(?i)\bdetach\s+delete\b|\bmatch\b[^;]*\)\s*(where\b[^;]*)?\bdelete\s+\w`)

// httpRemoves matches a request that deletes data in the service it
// reaches: an HTTP DELETE (RFC 9110 §9.3.5: remove the association of the
// target resource — an index, a database, a key, a route), or a request
// whose URL or body names a store's delete operation. The host does not
// matter: a search engine or database on localhost loses its data as
// surely as a remote one, so unlike egress-other this does not exempt the
// loopback. how names the client ("curl -X DELETE"); bodies are the
// request bodies given on the command line (a body read from a file is
// not read).
func (a *analyzer) httpRemoves(how, method string, urls, bodies, headers []field) {
	if method != "DELETE" && methodOverridden(headers, bodies, urls) {
		method, how = "DELETE", how+" (a method override to DELETE)"
	}
	if method == "DELETE" {
		if len(urls) == 0 {
			a.add(Destructive, false, "%s: an HTTP DELETE removes what its URL names", how)
		}
		for _, u := range urls {
			a.add(Destructive, false, "%s %s: an HTTP DELETE removes what the URL names", how, u)
		}
		return
	}
	sends := method != "" && !readMethod(method) || len(bodies) > 0
	for _, u := range urls {
		if u.dyn {
			continue
		}
		if why := httpURLRemoves(u.s, sends); why != "" {
			a.add(Destructive, false, "%s %s: %s", how, u.s, why)
			return
		}
	}
	for _, b := range bodies {
		if b.dyn && b.s == dynMark {
			continue
		}
		if why := httpTextRemoves(b.s); why != "" {
			a.add(Destructive, false, "%s sends %s", how, why)
			return
		}
	}
}

// methodOverridden reports whether a request asks the server to take it
// as a DELETE whatever its method: a header frameworks and gateways honour
// (X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override), or a form
// field or query parameter _method=delete (Rails, Laravel, Symfony).
func methodOverridden(headers, bodies, urls []field) bool {
	for _, h := range headers {
		name, val, ok := strings.Cut(h.s, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "x-http-method-override", "x-http-method", "x-method-override":
			if strings.EqualFold(strings.TrimSpace(val), "DELETE") {
				return true
			}
		}
	}
	form := func(q string) bool {
		vs, err := url.ParseQuery(q)
		if err != nil {
			return false
		}
		for _, v := range vs["_method"] {
			if strings.EqualFold(v, "DELETE") {
				return true
			}
		}
		return false
	}
	for _, b := range bodies {
		if !b.dyn && form(b.s) {
			return true
		}
	}
	for _, u := range urls {
		if _, q, ok := strings.Cut(u.s, "?"); ok && !u.dyn && form(q) {
			return true
		}
	}
	return false
}

// httpURLRemoves says what a URL's path or query deletes, or "".
func httpURLRemoves(raw string, sends bool) string {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	segs := strings.Split(strings.Trim(strings.ToLower(u.Path), "/"), "/")
	last := segs[len(segs)-1]
	for _, s := range segs {
		if s == "_delete_by_query" || s == "_purge" {
			return "it deletes the documents the request selects"
		}
	}
	if sends && httpDeleteVerbs.has(last) {
		return "the endpoint deletes what the request names"
	}
	q := u.Query()
	// Solr's Collections and CoreAdmin APIs act on GET: action=DELETE,
	// DELETESHARD, DELETEREPLICA, DELETEALIAS, or UNLOAD with its
	// delete options.
	for k, vs := range q {
		if !strings.EqualFold(k, "action") {
			continue
		}
		for _, v := range vs {
			v = strings.ToLower(v)
			if strings.HasPrefix(v, "delete") {
				return "action=" + v + " deletes what it names"
			}
			if v == "unload" {
				for k2, v2 := range q {
					if k2l := strings.ToLower(k2); strings.HasPrefix(k2l, "delete") && len(v2) > 0 && strings.EqualFold(v2[0], "true") {
						return "action=unload with " + k2 + "=true deletes the core's data"
					}
				}
			}
		}
	}
	for k, vs := range q {
		for _, v := range vs {
			if strings.EqualFold(k, "stream.body") && httpBodyDeletes.MatchString(v) {
				return "its stream.body is a delete command"
			}
			for _, name := range httpQueryText {
				if strings.EqualFold(k, name) {
					if why := httpTextRemoves(v); why != "" {
						return "its " + k + " parameter is " + why
					}
				}
			}
		}
	}
	return ""
}

// httpTextRemoves says what a query text or request body deletes, or "".
func httpTextRemoves(s string) string {
	if strings.ContainsRune(s, '%') || strings.ContainsRune(s, '+') {
		if d, err := url.QueryUnescape(s); err == nil {
			s += "\n" + d
		}
	}
	switch {
	case destructiveSQL.MatchString(s):
		return "a destructive statement"
	case cypherDelete.MatchString(s):
		return "a Cypher delete"
	case httpBodyDeletes.MatchString(s):
		return "a delete command"
	}
	return ""
}
