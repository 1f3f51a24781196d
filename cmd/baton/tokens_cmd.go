package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/baton-dev/baton/internal/document"
	"github.com/baton-dev/baton/tokens"
)

func init() { register(newTokensCmd) }

// tokenRow is one file's count.
type tokenRow struct {
	File   string `json:"file"`
	Tokens int    `json:"tokens"`
	Bytes  int    `json:"bytes"`
}

// tokenTable prints the counts right-aligned to the widest, then two spaces
// and the name; the last column is never padded, so a name is never glued
// to its count.
func tokenTable(rows []tokenRow, total int, encoding string) string {
	width := len(strconv.Itoa(total))
	for _, r := range rows {
		width = max(width, len(strconv.Itoa(r.Tokens)))
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%*d  %s\n", width, r.Tokens, r.File)
	}
	if len(rows) > 1 {
		fmt.Fprintf(&b, "%*d  total\n", width, total)
	}
	fmt.Fprintf(&b, "%*s  (%s)\n", width, "", encoding)
	return b.String()
}

func newTokensCmd() *cobra.Command {
	var (
		model    string
		encoding string
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "tokens FILE...",
		Short: "Count the tokens in files",
		Long: `tokens prints the token count of each FILE (- for standard input) and the
total, with the counter baton uses for its accounting. Counts are local: a
provider's own tokenizer may differ by a few percent; run records calibrate
the two against the usage providers report.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErrorf("tokens needs at least one FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var c *tokens.Counter
			if encoding != "" {
				var err error
				if c, err = tokens.New(tokens.Encoding(encoding)); err != nil {
					return usageErrorf("--encoding: %v", err)
				}
			} else {
				c = tokens.ForModel(model)
			}
			var rows []tokenRow
			total := 0
			for _, name := range args {
				var data []byte
				var err error
				if name == "-" {
					data, err = document.ReadStdin(cmd.InOrStdin())
				} else {
					data, err = document.ReadFile(name)
				}
				if err != nil {
					return err
				}
				n := c.Count(string(data))
				total += n
				rows = append(rows, tokenRow{File: name, Tokens: n, Bytes: len(data)})
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"encoding": c.Encoding(), "files": rows, "total": total})
			}
			_, err := io.WriteString(out, tokenTable(rows, total, string(c.Encoding())))
			return err
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "count as this model's tokenizer would (picks the encoding)")
	cmd.Flags().StringVar(&encoding, "encoding", "", "encoding to count with: o200k_base or cl100k_base")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
