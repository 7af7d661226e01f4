package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchemas compiles every tool's output schema with a validator of
// its own, neither mcp-go's nor the SDK's, so a result is checked against
// what the server declares, not what either library assumes. A tool
// without one is an error: every Litterbox tool has one.
func compileSchemas(ctx context.Context, s session) (map[string]*jsonschema.Schema, error) {
	raw, err := s.outputSchemas(ctx)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	out := map[string]*jsonschema.Schema{}
	for name, doc := range raw {
		if m, ok := doc.(map[string]any); !ok || len(m) == 0 {
			return nil, fmt.Errorf("tool %s has no output schema", name)
		}
		url := "mem://tools/" + name + ".json"
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("tool %s: %w", name, err)
		}
		if out[name], err = c.Compile(url); err != nil {
			return nil, fmt.Errorf("tool %s: %w", name, err)
		}
	}
	return out, nil
}

// checkOutput validates a result's structured content, when it has any,
// against its tool's output schema.
func checkOutput(schemas map[string]*jsonschema.Schema, o output) error {
	if o.StructuredContent == nil || o.Cancelled {
		return nil
	}
	s, ok := schemas[o.Tool]
	if !ok {
		return fmt.Errorf("no output schema to check the result against")
	}
	// Through JSON, as a client receives it.
	data, err := json.Marshal(o.StructuredContent)
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("structuredContent does not match the tool's outputSchema: %v", err)
	}
	return nil
}
