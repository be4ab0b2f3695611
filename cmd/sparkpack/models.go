package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/sparkpack/sparkpack/api"
)

// `sparkpack models`: the learned performance models (GET /api/v1/models).
// Registered here, not in main.go's table, to keep that table's lines.
func init() {
	commands["models"] = command{"show the learned performance models: runs, fitted curve, error and predicted run time per executor count, per job signature", runModels}
}

func runModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, fs := newViewFlags("models", "wide adds the fitted parameters, the fit's error and the p90 of each point", stderr)
	executors := fs.String("executors", "", "executor counts of the predicted curve, comma-separated (default: the server's, 1,2,4,8,16,32)")
	size := fs.String("size", "", "the job size the curve is predicted for: input x iterations, in the history's unit (default 1)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack models [flags] [SIGNATURE-OR-ID]   (per job signature: runs, model, error, predicted run times)")
		fs.PrintDefaults()
	}
	var sel []string
	rest := args
	for {
		if err := parseFlagsOnly(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		sel = append(sel, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(sel) > 1 {
		fmt.Fprintf(fs.Output(), "models: give at most one signature or id; see %s --help\n", fs.Name())
		return errUsage
	}
	q := url.Values{}
	if *executors != "" {
		q.Set("executors", *executors)
	}
	if *size != "" {
		q.Set("size", *size)
	}
	if len(sel) == 1 && strings.Contains(sel[0], "/") {
		q.Set("signature", sel[0]) // the server filters by a full signature
	}
	path := "/api/v1/models"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return v.run(ctx, stderr, path, "models", func(x any) error {
		mv := x.(*api.ModelsView)
		if len(sel) == 1 {
			// One model, by its id or its signature.
			var keep []api.ModelView
			for _, m := range mv.Models {
				if m.ID == sel[0] || m.Signature == sel[0] {
					keep = append(keep, m)
				}
			}
			if len(keep) == 0 && len(sel[0]) >= 4 {
				// the start of an id, as sparkpack job takes one
				for _, m := range mv.Models {
					if strings.HasPrefix(m.ID, sel[0]) {
						keep = append(keep, m)
					}
				}
				if len(keep) > 1 {
					return fmt.Errorf("%q is the start of %d model ids; give more of the id (sparkpack models lists them)", sel[0], len(keep))
				}
			}
			if len(keep) == 0 {
				return fmt.Errorf("no model of signature %q; list them with sparkpack models", sel[0])
			}
			mv.Models = keep
		}
		switch *v.out {
		case outJSON, outYAML:
			if len(sel) == 1 {
				return writeStructured(stdout, *v.out, mv.Models[0])
			}
			return writeStructured(stdout, *v.out, mv)
		case outName:
			for _, m := range mv.Models {
				fmt.Fprintln(stdout, m.Signature)
			}
			return nil
		}
		printModels(stdout, mv, *v.out == outWide)
		return nil
	}, func() any { return new(api.ModelsView) })
}

func printModels(w io.Writer, mv *api.ModelsView, wide bool) {
	if len(mv.Models) == 0 {
		fmt.Fprintln(w, "no models yet: sparkpack learns one per job signature from its finished runs whose run time it measured")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	h := "ID\tSIGNATURE\tRUNS\tLEVEL\tMAPE\tPREDICTED P50 (EXECUTORS: SECONDS)"
	if wide {
		h += "\tP90\tFORM\tFIT MAPE\tALPHA\tBETA\tGAMMA\tSHUFFLE COST\tCONTENTION"
	}
	fmt.Fprintln(tw, h)
	for _, m := range mv.Models {
		mape := "-"
		if m.MAPEPercent != nil {
			mape = fmt.Sprintf("%.1f%% (%d)", *m.MAPEPercent, m.MAPERuns)
		}
		var p50, p90 []string
		for _, p := range m.Curve {
			p50 = append(p50, fmt.Sprintf("%d:%.0f", p.Executors, p.P50Seconds))
			p90 = append(p90, fmt.Sprintf("%d:%.0f", p.Executors, p.P90Seconds))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s", m.ID, m.Signature, m.Runs, m.Level, mape, orDash(strings.Join(p50, " ")))
		if wide {
			form, fit, a, b, g, sc, ct := "-", "-", "-", "-", "-", "-", "-"
			if m.Form != "" {
				form = string(m.Form)
			}
			if m.FitMAPEPercent != nil {
				fit = fmt.Sprintf("%.1f%%", *m.FitMAPEPercent)
			}
			if p := m.Params; p != nil {
				a = fmt.Sprintf("%.3g", p.Alpha.At(m.Size))
				b = fmt.Sprintf("%.3g", p.Beta.At(m.Size))
				g = fmt.Sprintf("%.3g", p.Gamma.At(m.Size))
				sc, ct = fmt.Sprintf("%.2f", p.ShuffleCost), fmt.Sprintf("%.2f", p.Contention)
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", orDash(strings.Join(p90, " ")), form, fit, a, b, g, sc, ct)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
