package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// outputFormat is the -o flag of the client commands, in the convention of
// kubectl and nomad: table (the default), wide (more columns), json, yaml,
// or name (one id per line, for scripts: sparkpack jobs -o name | ...).
type outputFormat string

const (
	outTable outputFormat = "table"
	outWide  outputFormat = "wide"
	outJSON  outputFormat = "json"
	outYAML  outputFormat = "yaml"
	outName  outputFormat = "name"
)

var outputFormats = []outputFormat{outTable, outWide, outJSON, outYAML, outName}

func (o *outputFormat) String() string { return string(*o) }

func (o *outputFormat) Set(v string) error {
	for _, f := range outputFormats {
		if strings.EqualFold(v, string(f)) {
			*o = f
			return nil
		}
	}
	return fmt.Errorf("%q is not an output format; use table, wide, json, yaml or name", v)
}

// registerOutput adds -o and --output (one value) to fs.
func registerOutput(fs *flag.FlagSet, what string) *outputFormat {
	o := outTable
	usage := "output format: table, wide, json, yaml or name (" + what + ")"
	fs.Var(&o, "o", usage)
	fs.Var(&o, "output", "the same as -o")
	return &o
}

// outputGiven reports whether -o or --output was given on the command line
// (after fs.Parse).
func outputGiven(fs *flag.FlagSet) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "o" || f.Name == "output" })
	return given
}

// otherFormat refuses an output flag (--json, --csv) given with an -o that
// asks for something else: one of them would be ignored. same is the -o
// value the flag agrees with ("" for none).
func otherFormat(fs *flag.FlagSet, flagName string, set bool, out, same outputFormat) error {
	if !set || !outputGiven(fs) || out == same {
		return nil
	}
	return fmt.Errorf("--%s and -o %s ask for two outputs: give one of them", flagName, out)
}

// writeStructured writes v as indented JSON or as YAML. YAML is made from
// the JSON form, so that both use the API's field names.
func writeStructured(w io.Writer, format outputFormat, v any) error {
	if format == outJSON {
		data, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return fmt.Errorf("encode the output: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode the output: %w", err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return fmt.Errorf("encode the output: %w", err)
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(generic); err != nil {
		return fmt.Errorf("encode the output as YAML: %w", err)
	}
	return enc.Close()
}

// watchLoop calls show at once, then every interval until ctx ends (Ctrl-C),
// which is a normal end: it returns nil. An error of show ends the watch,
// except one that retrying may cure, which is reported and tried again.
func watchLoop(ctx context.Context, interval time.Duration, stderr io.Writer, show func(ctx context.Context) error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := show(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if ok, _ := transient(err); !ok {
				return err
			}
			fmt.Fprintf(stderr, "(watch: %v; trying again in %s)\n", err, interval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
