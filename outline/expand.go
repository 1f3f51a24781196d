package outline

import "strings"

// Expand renders the subsections that a collapsed outline hides under the
// headings pointers name, as outline lines, for a planner that asked to
// see them: each branch gets an equal share of budget tokens and shows as
// many levels below its heading, with their first words while they fit,
// as that share allows. It returns the text and the pointers it could not
// show: not a heading of the outline, a heading with nothing hidden below
// it, or a branch whose next level alone is over its share.
func (o *Outline) Expand(pointers []string, c Counter, budget int) (text string, missing []string) {
	if len(pointers) == 0 {
		return "", nil
	}
	share := budget / len(pointers)
	var b strings.Builder
	for _, p := range pointers {
		i, ok := o.index[normPointer(p)]
		if !ok {
			if es := o.Match(p); len(es) == 1 {
				i, ok = o.index[normPointer(o.Pointer(es[0]))]
			}
		}
		if !ok || o.all[i].Depth < o.Depth || o.all[i].subtree == 0 {
			missing = append(missing, p)
			continue
		}
		part := o.branch(i, c, share)
		if part == "" {
			missing = append(missing, p)
			continue
		}
		b.WriteString(part)
	}
	return b.String(), missing
}

// branch renders the descendants of entry i at the deepest level, with
// leads or without, whose text fits budget; "" when none does.
func (o *Outline) branch(i int, c Counter, budget int) string {
	top := o.all[i]
	desc := o.all[i+1 : i+1+top.subtree]
	deepest := top.Depth
	for _, e := range desc {
		deepest = max(deepest, e.Depth)
	}
	for _, leads := range []bool{true, false} {
		for depth := deepest; depth > top.Depth; depth-- {
			var b strings.Builder
			for _, e := range desc {
				if e.Depth > depth {
					continue
				}
				b.WriteString(o.fixedPart(e))
				if e.Depth == depth && e.subtree > 0 {
					b.WriteString(hiddenPart(e.subtree))
				}
				b.WriteByte(']')
				if leads && e.Lead != "" {
					b.WriteString(leadPart(e.Lead))
				}
				b.WriteByte('\n')
			}
			if s := b.String(); c.Count(s) <= budget {
				return s
			}
		}
	}
	return ""
}
