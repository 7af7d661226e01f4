package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// The tools' inputs and outputs as Go types: their JSON schemas are made
// from these (field names from the json tags, descriptions from the
// jsonschema tags, required where a field has no omitempty), so a schema
// and the code that reads or writes it cannot drift.

// schemaFor is T's JSON schema; enums lists the values of string fields
// that take only those.
func schemaFor[T any](enums map[string][]any) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("schema of %T: %v", *new(T), err))
	}
	for field, values := range enums {
		p, ok := s.Properties[field]
		if !ok {
			panic(fmt.Sprintf("schema of %T: no field %q", *new(T), field))
		}
		p.Enum = values
	}
	return s
}

// schemaOf is schemaFor as JSON.
func schemaOf[T any](enums map[string][]any) json.RawMessage {
	data, err := json.Marshal(schemaFor[T](enums))
	if err != nil {
		panic(err)
	}
	return data
}

// typed binds a call's arguments to In before h sees them. A required
// argument (a field of In without omitempty) that is absent, or one of the
// wrong type, is the caller's error, named: the schema the client saw and
// this check come from the same type.
func typed[In any](h func(context.Context, gomcp.CallToolRequest, In) (*gomcp.CallToolResult, error)) server.ToolHandlerFunc {
	required := schemaFor[In](nil).Required
	return func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
		given := req.GetArguments()
		for _, k := range required {
			if _, ok := given[k]; !ok {
				return gomcp.NewToolResultError(fmt.Sprintf("missing required argument '%s'", k)), nil
			}
		}
		var in In
		if err := req.BindArguments(&in); err != nil {
			return gomcp.NewToolResultError("invalid arguments: " + argumentError(err)), nil
		}
		return h(ctx, req, in)
	}
}

// argumentError names a mistyped argument by its JSON name and the JSON type
// it needs, not by the Go field and type behind it.
func argumentError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Field == "" || te.Type == nil {
		return oneLine(err)
	}
	return fmt.Sprintf("argument '%s' must be %s, not %s", te.Field, jsonType(te.Type), jsonValue(te.Value))
}

// jsonType is what a Go type takes in JSON, with its article.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// jsonValue is the kind of JSON value the decoder found, with its article.
func jsonValue(v string) string {
	switch v {
	case "array", "object", "integer":
		return "an " + v
	case "bool":
		return "true or false"
	case "":
		return "that"
	}
	return "a " + v
}

// input and output give a tool the schemas of its Go types.
func input[T any](enums map[string][]any) gomcp.ToolOption {
	raw := schemaOf[T](enums)
	return func(t *gomcp.Tool) {
		t.InputSchema.Type = "" // NewTool's default; a tool has one or the other
		t.RawInputSchema = raw
	}
}

func output[T any]() gomcp.ToolOption { return gomcp.WithRawOutputSchema(schemaOf[T](nil)) }

type createIn struct {
	Name    string `json:"name" jsonschema:"Sandbox name; slugified (lowercase, [a-z0-9-], 1-63 characters)."`
	BaseRef string `json:"base_ref,omitempty" jsonschema:"Where to start instead of HEAD: a branch, a tag or a commit id on one, optionally with ~N or ^N; a sandbox's branch litterbox/NAME only for this server's sandboxes."`
}

type forkIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox to fork (as given to sandbox-create)."`
	Name    string `json:"name" jsonschema:"Name of the new sandbox; slugified (lowercase, [a-z0-9-], 1-63 characters)."`
}

type listIn struct{}

type listOut struct {
	Sandboxes []sandbox.Info `json:"sandboxes"`
}

type sandboxIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
}

type bashIn struct {
	Sandbox     string  `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Command     string  `json:"command" jsonschema:"The shell command."`
	Workdir     string  `json:"workdir,omitempty" jsonschema:"Directory to run in; default /src."`
	Timeout     float64 `json:"timeout,omitempty" jsonschema:"Seconds before the command is killed; default 120. Not with background."`
	OutputLimit int64   `json:"output_limit,omitempty" jsonschema:"Bytes of each of stdout and stderr to return (1024-1048576): the first half and the last half, the middle elided and the whole stream saved in a file the result names. Default the project's [agent] output-limit (32768 unless set)."`
	Background  bool    `json:"background,omitempty" jsonschema:"Run it as a service of its own and return at once; default false."`
	Name        string  `json:"name,omitempty" jsonschema:"With background: the service's name; default the command's program (httpd, npm-2). Starting a stopped one's name again replaces it."`
}

// bashOut is a command's result, or with background the service started.
type bashOut struct {
	ExitCode  *int    `json:"exit_code,omitempty"`
	Stdout    *string `json:"stdout,omitempty"`
	Stderr    *string `json:"stderr,omitempty"`
	TimedOut  *bool   `json:"timed_out,omitempty"`
	Cancelled *bool   `json:"cancelled,omitempty"`
	Truncated *bool   `json:"truncated,omitempty"`
	// StdoutLog and StderrLog name the files in the sandbox holding a
	// stream the result shows only the head and tail of.
	StdoutLog string `json:"stdout_log,omitempty"`
	StderrLog string `json:"stderr_log,omitempty"`
	// Snapshot is the commit the call made, null when nothing changed
	// (always, with background).
	Snapshot *string `json:"snapshot"`
	result.Between
	result.Bounds
	// With background.
	Service string `json:"service,omitempty"`
	State   string `json:"state,omitempty"`
	PID     int    `json:"pid,omitempty"`
	Log     string `json:"log,omitempty"`
}

type readIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Path    string `json:"path" jsonschema:"File to read. Relative paths are under /src; absolute paths are inside the container."`
	Offset  int    `json:"offset,omitempty" jsonschema:"Lines to skip (0-based): offset 93 starts at line 94. Default 0."`
	Limit   int    `json:"limit,omitempty" jsonschema:"How many lines; default 2000."`
}

type writeIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Path    string `json:"path" jsonschema:"File to write. Relative paths are under /src; absolute paths are inside the container."`
	Content string `json:"content" jsonschema:"The whole new content."`
}

type writeOut struct {
	Bytes    int     `json:"bytes"`
	Snapshot *string `json:"snapshot"`
	result.Between
	result.Bounds
}

type patchIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Path    string `json:"path" jsonschema:"File the diff applies to. Relative paths are under /src; absolute paths are inside the container."`
	Diff    string `json:"diff" jsonschema:"Unified diff (@@ -a,b +c,d @@ hunks) of that file."`
}

type patchOut struct {
	Snapshot *string `json:"snapshot"`
	Created  bool    `json:"created"`
	Deleted  bool    `json:"deleted"`
	result.Between
	result.Bounds
}

type editIn struct {
	Sandbox    string         `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Path       string         `json:"path" jsonschema:"File to edit. Relative paths are under /src; absolute paths are inside the container."`
	OldString  *string        `json:"old_string,omitempty" jsonschema:"Exact text to replace (not with edits)."`
	NewString  *string        `json:"new_string,omitempty" jsonschema:"Replacement text (not with edits)."`
	ReplaceAll bool           `json:"replace_all,omitempty" jsonschema:"Replace every occurrence; default false."`
	Edits      *[]textedit.Op `json:"edits,omitempty" jsonschema:"Several replacements in one call, at most 100, instead of old_string and new_string."`
}

type editOut struct {
	Replacements int     `json:"replacements"`
	Edits        int     `json:"edits"`
	Snapshot     *string `json:"snapshot"`
	result.Between
	result.Bounds
}

type lsIn struct {
	Sandbox   string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Path      string `json:"path,omitempty" jsonschema:"Directory; default /src."`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"List the whole tree; default false."`
}

type lsOut struct {
	Entries   []result.Entry `json:"entries"`
	Truncated bool           `json:"truncated"`
}

type globIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Pattern string `json:"pattern" jsonschema:"Glob pattern: * and ? within a name, ** across directories, [abc], {a,b}."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search; default /src."`
}

type globOut struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated"`
}

type grepIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Pattern string `json:"pattern" jsonschema:"Regular expression, Go's RE2 syntax."`
	Path    string `json:"path,omitempty" jsonschema:"File or directory to search; default /src."`
	Include string `json:"include,omitempty" jsonschema:"Only files whose name matches this glob, e.g. *.go or *.{ts,tsx}."`
}

type grepOut struct {
	Matches   []result.Match `json:"matches"`
	Truncated bool           `json:"truncated"`
}

type readyIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Summary string `json:"summary" jsonschema:"What the work does and how it was checked, for the person who reviews it (at most 4096 bytes)."`
}

type syncIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
}

type milestoneIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Message string `json:"message" jsonschema:"Commit message for the squashed work."`
}

type diffIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Since   string `json:"since,omitempty" jsonschema:"base (default) or milestone (the base when there is none yet)."`
}

type portsOut struct {
	Ports []ports.Port `json:"ports"`
}

type serviceIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox (as given to sandbox-create)."`
	Action  string `json:"action" jsonschema:"What to do."`
	Service string `json:"service,omitempty" jsonschema:"Service name; optional for status."`
}

type serviceOut struct {
	Services *[]services.State `json:"services,omitempty"`
	Service  string            `json:"service,omitempty"`
	Log      *string           `json:"log,omitempty"`
}
