// Package eventschema compiles kraftwatch's event JSON Schemas (events/schema/*.json)
// for tests, in two readings: as published, the way a subscriber validates (objects are
// open to members a later v1 kraftwatch adds), and strict, the way kraftwatch's own tests
// check what it publishes (every member it writes is one the schema declares, so a
// member added to the Go types without the schema fails a test).
//
// The compiled schemas are immutable and safe for concurrent use.
package eventschema

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Compile compiles the schema doc as published.
func Compile(doc []byte) (*jsonschema.Schema, error) { return compile(doc, false) }

// CompileStrict compiles doc with every open object closed ("additionalProperties": true
// made false).
func CompileStrict(doc []byte) (*jsonschema.Schema, error) { return compile(doc, true) }

func compile(doc []byte, strict bool) (*jsonschema.Schema, error) {
	d, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	root, ok := d.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema is not an object")
	}
	url, _ := root["$id"].(string)
	if url == "" {
		return nil, fmt.Errorf("schema has no $id")
	}
	if strict {
		closeObjects(d)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(url, d); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// closeObjects sets every "additionalProperties": true under v to false.
func closeObjects(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "additionalProperties" && e == true {
				v[k] = false
				continue
			}
			closeObjects(e)
		}
	case []any:
		for _, e := range v {
			closeObjects(e)
		}
	}
}

// Validate checks the JSON body against s.
func Validate(s *jsonschema.Schema, body []byte) error {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return err
	}
	return s.Validate(inst)
}

// Objects returns the JSON pointer of every subschema of doc that describes an object
// (its "type" is "object"), with its "additionalProperties" (nil when absent).
func Objects(doc []byte) (map[string]any, error) {
	var d any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	out := map[string]any{}
	var walk func(string, any)
	walk = func(ptr string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["type"] == "object" {
				out[ptr] = v["additionalProperties"]
			}
			for k, e := range v {
				walk(ptr+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", ptr, i), e)
			}
		}
	}
	walk("", d)
	return out, nil
}
