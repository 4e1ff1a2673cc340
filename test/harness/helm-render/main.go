// Renders a chart's templates with Go's own text/template, the engine Helm
// runs, for the chart tests (no Helm binary can be installed here). Helm's
// way of calling it is kept: every file under templates/ parsed into one
// template set named <chart>/templates/<file>, missingkey=zero with "<no
// value>" removed from the output, files starting with _ rendered by no one
// but include. The functions are Helm's for the names the chart may use,
// written after sprig's and Helm's definitions; any other name fails to parse,
// as it would in Helm if it were misspelt.
//
// Usage: helm-render CHART_DIR < context.json, where the context holds
// Values, Release and Chart as Helm builds them; prints {"file": "text"} as
// JSON, or the engine's error on stderr with exit status 1.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

// empty is sprig's notion of empty, which default and Helm's required use.
func empty(given interface{}) bool {
	value := reflect.ValueOf(given)
	if !value.IsValid() {
		return true
	}
	switch value.Kind() {
	case reflect.Array, reflect.Chan, reflect.Map, reflect.Slice, reflect.String:
		return value.Len() == 0
	case reflect.Bool:
		return !value.Bool()
	case reflect.Complex64, reflect.Complex128:
		return value.Complex() == 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return value.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return value.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return value.Float() == 0
	case reflect.Interface, reflect.Ptr:
		return value.IsNil()
	}
	return false
}

// text is sprig's strval: how a value becomes a string in quote and b64enc.
func text(value interface{}) string {
	switch typed := value.(type) {
	case string:
		return typed
	case []byte:
		return string(typed)
	case error:
		return typed.Error()
	case fmt.Stringer:
		return typed.String()
	}
	return fmt.Sprintf("%v", value)
}

func indent(spaces int, s string) string {
	pad := strings.Repeat(" ", spaces)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// toYAML writes decoded JSON (maps, lists, strings, numbers, booleans, null)
// as block YAML with sorted keys, as sigs.k8s.io/yaml does for Helm's toYaml;
// strings are always double-quoted, which YAML reads back the same.
func toYAML(value interface{}, depth int) string {
	pad := strings.Repeat("  ", depth)
	switch typed := value.(type) {
	case map[string]interface{}:
		if len(typed) == 0 {
			return "{}"
		}
		keys := make([]string, 0, len(typed))
		for key := range typed {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		lines := make([]string, 0, len(keys))
		for _, key := range keys {
			lines = append(lines, pad+strconv.Quote(key)+":"+nested(typed[key], depth))
		}
		return strings.Join(lines, "\n")
	case []interface{}:
		if len(typed) == 0 {
			return "[]"
		}
		lines := make([]string, 0, len(typed))
		for _, item := range typed {
			// A map in a list starts on the dash's line, its other keys under its first.
			if m, ok := item.(map[string]interface{}); ok && len(m) > 0 {
				lines = append(lines, pad+"- "+strings.TrimPrefix(toYAML(m, depth+1), pad+"  "))
				continue
			}
			lines = append(lines, pad+"-"+nested(item, depth))
		}
		return strings.Join(lines, "\n")
	case string:
		return strconv.Quote(typed)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", value)
}

// nested is what follows a key's colon or a list's dash: a scalar on the same line, a collection below it.
func nested(value interface{}, depth int) string {
	switch typed := value.(type) {
	case map[string]interface{}:
		if len(typed) > 0 {
			return "\n" + toYAML(typed, depth+1)
		}
	case []interface{}:
		if len(typed) > 0 {
			return "\n" + toYAML(typed, depth+1)
		}
	}
	return " " + toYAML(value, 0)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: helm-render CHART_DIR < context.json")
		os.Exit(2)
	}
	chartDir := os.Args[1]
	var context map[string]interface{}
	if err := json.NewDecoder(os.Stdin).Decode(&context); err != nil {
		fmt.Fprintln(os.Stderr, "the context is not JSON:", err)
		os.Exit(2)
	}
	chartName := filepath.Base(chartDir)

	set := template.New("gotpl")
	funcs := template.FuncMap{
		"default": func(fallback interface{}, given ...interface{}) interface{} {
			if len(given) == 0 || empty(given[0]) {
				return fallback
			}
			return given[0]
		},
		"empty": empty,
		"required": func(message string, value interface{}) (interface{}, error) {
			if value == nil {
				return value, errors.New(message)
			}
			if s, ok := value.(string); ok && s == "" {
				return value, errors.New(message)
			}
			return value, nil
		},
		"quote": func(values ...interface{}) string {
			quoted := make([]string, 0, len(values))
			for _, value := range values {
				if value != nil {
					quoted = append(quoted, fmt.Sprintf("%q", text(value)))
				}
			}
			return strings.Join(quoted, " ")
		},
		"b64enc":  func(value interface{}) string { return base64.StdEncoding.EncodeToString([]byte(text(value))) },
		"toYaml":  func(value interface{}) string { return strings.TrimSuffix(toYAML(value, 0), "\n") },
		"indent":  indent,
		"nindent": func(spaces int, s string) string { return "\n" + indent(spaces, s) },
		"include": func(name string, data interface{}) (string, error) {
			var out bytes.Buffer
			err := set.ExecuteTemplate(&out, name, data)
			return out.String(), err
		},
	}
	set.Funcs(funcs).Option("missingkey=zero")

	files, err := filepath.Glob(filepath.Join(chartDir, "templates", "*"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sort.Strings(files)
	names := map[string]string{}
	for _, file := range files {
		source, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		name := chartName + "/templates/" + filepath.Base(file)
		if _, err := set.New(name).Parse(string(source)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		names[filepath.Base(file)] = name
	}

	rendered := map[string]string{}
	for file, name := range names {
		if strings.HasPrefix(file, "_") {
			continue
		}
		var out bytes.Buffer
		if err := set.ExecuteTemplate(&out, name, context); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		rendered[file] = strings.ReplaceAll(out.String(), "<no value>", "")
	}
	if err := json.NewEncoder(os.Stdout).Encode(rendered); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
