package sensitive

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestImportLines(t *testing.T) {
	tests := []struct {
		name string
		path string
		src  string
		want []string
	}{
		{"python", "app/views.py", `"""Views."""
import os
import os.path as osp
from auth.session import current_user
from textfmt import (format_name,
    format_date)

def f():
    mod = importlib.import_module("app.plugins")
    x = 1  # not an import
`, []string{"import os", "import os.path as osp", "from auth.session import current_user",
			"from textfmt import (format_name,", `mod = importlib.import_module("app.plugins")`}},
		{"javascript", "web/app.tsx", `import React from 'react';
import './styles.css';
import {
  login,
} from "./auth/client";
export * from './secrets';
const fs = require('fs');
const mod = await import('./lazy');
const important = 1;
`, []string{"import React from 'react';", "import './styles.css';", "import {",
			`} from "./auth/client";`, "export * from './secrets';", "const fs = require('fs');",
			"const mod = await import('./lazy');"}},
		{"go", "cmd/x/main.go", `package main

import "fmt"

import (
	"os"
	// a comment
	authpkg "example.com/app/internal/auth"
)

import ( "strings" )

func main() { fmt.Println("import (") }
`, []string{`import "fmt"`, `"os"`, `authpkg "example.com/app/internal/auth"`, `import ( "strings" )`}},
		{"java", "src/Main.java", `package app;
import java.util.List;
import static app.security.Guard.check;
public class Main { String important; }
`, []string{"import java.util.List;", "import static app.security.Guard.check;"}},
		{"kotlin", "src/Main.kt", "import app.auth.Session\nval x = 1\n", []string{"import app.auth.Session"}},
		{"scala", "src/Main.scala", "import app.{a, b}\n", []string{"import app.{a, b}"}},
		{"rust", "src/lib.rs", `use std::io;
pub use crate::crypto::Key;
pub(crate) use self::x;
extern crate serde;
mod auth;
mod inline { }
fn user() {}
`, []string{"use std::io;", "pub use crate::crypto::Key;", "pub(crate) use self::x;",
			"extern crate serde;", "mod auth;"}},
		{"ruby", "lib/a.rb", `require 'json'
require_relative "auth/session"
required = true
`, []string{"require 'json'", `require_relative "auth/session"`}},
		{"c", "src/a.c", `#include <stdio.h>
#  include "crypto/aes.h"
#import <Foundation/Foundation.h>
#define X 1
`, []string{"#include <stdio.h>", `#  include "crypto/aes.h"`, "#import <Foundation/Foundation.h>"}},
		{"php", "src/a.php", `<?php require_once 'auth.php';
use App\Security\Guard;
include "header.php";
$used = 1;
`, []string{"<?php require_once 'auth.php';", `use App\Security\Guard;`, `include "header.php";`}},
		{"csharp", "src/A.cs", `using System;
global using App.Auth;
using Alias = App.X;
using (var f = Open()) { }
using var g = Open();
`, []string{"using System;", "global using App.Auth;", "using Alias = App.X;"}},
		{"unknown extension", "README.md", "import os\n", nil},
		{"no extension", "Makefile", "include common.mk\n", nil},
		{"crlf", "a.py", "import os\r\nx = 1\r\n", []string{"import os"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ImportLines(tc.path, []byte(tc.src))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ImportLines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckImports(t *testing.T) {
	p := testPolicy(t)
	tests := []struct {
		name string
		path string
		src  string
		want []Verdict
	}{
		{"python positive", "src/views.py", "import os\nfrom auth.session import current_user\n",
			[]Verdict{{"from auth.session import current_user", Denied, "import:auth"}}},
		{"python negative", "src/views.py", "import os\nfrom textfmt import format_name\n", nil},
		{"go positive", "src/main.go", "import \"example.com/app/internal/auth\"\n",
			[]Verdict{{`import "example.com/app/internal/auth"`, Denied, "import:auth"}}},
		{"go block", "src/main.go", "import (\n\t\"fmt\"\n\t\"example.com/app/crypto/aes\"\n)\n",
			[]Verdict{{`"example.com/app/crypto/aes"`, Denied, "import:crypt"}}},
		{"js camel", "src/a.ts", "import { useSession } from './AuthProvider';\n",
			[]Verdict{{"import { useSession } from './AuthProvider';", Denied, "import:auth"}}},
		{"js require secrets", "src/a.js", "const s = require('../config/secrets');\n",
			[]Verdict{{"const s = require('../config/secrets');", Denied, "import:secret"}}},
		{"rust", "src/lib.rs", "use crate::jwt::Claims;\nuse std::fmt;\n",
			[]Verdict{{"use crate::jwt::Claims;", Denied, "import:jwt"}}},
		{"java", "src/A.java", "import com.acme.security.Guard;\n",
			[]Verdict{{"import com.acme.security.Guard;", Denied, "import:secur"}}},
		{"c", "src/a.c", "#include \"openssl/hmac.h\"\n",
			[]Verdict{{`#include "openssl/hmac.h"`, Denied, "import:hmac"}}},
		{"lookalike residual", "src/a.py", "import author_bio\n",
			[]Verdict{{"import author_bio", Denied, "import:auth"}}},
		{"relative import residual", "src/a.py", "from . import helpers\n", nil},
		{"non-import mention", "src/a.py", "x = 'auth'\n", nil},
		{"unknown extension", "src/a.txt", "import auth\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := p.CheckImports(tc.path, []byte(tc.src))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckImports (-want +got):\n%s", diff)
			}
		})
	}
}
