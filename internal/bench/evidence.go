package bench

import (
	"slices"
	"strings"

	"github.com/baton-dev/baton/llm"
	"github.com/baton-dev/baton/llm/llmtest"
	"github.com/baton-dev/baton/orchestrate"
	"github.com/baton-dev/baton/tokens"
)

// ProviderEncoding is the tokenizer the evidence fake reports usage with. It
// differs on purpose from the o200k_base counter baton uses for
// ModelName, as a real provider's tokenizer differs from any local count:
// the "provider-reported / counted" ratio is then a measurement, not a
// number that is 1 by construction.
const ProviderEncoding = tokens.Cl100kBase

// Reply texts of the evidence fake when it finds nothing to quote.
const (
	noEvidenceReply = "The context does not hold what this subtask needs."
	noResultsReply  = "No subtask result holds what the task needs."
)

// evidenceFake answers like a model that can only repeat what it was sent:
// a sub-agent quotes the evidence sentences of its subtask that occur in its
// own context block and nothing else, and the synthesis joins the evidence
// sentences that occur in its prompt. The final answer then holds a sentence
// only if the slice that should have carried it did, so a missed slice shows
// as a wrong answer.
type evidenceFake struct {
	plan string
	// outlinePlan, when set, answers the outline planner's prompt; plan
	// then answers the full planner's.
	outlinePlan string
	bySubtask   map[string][]string // subtask text → its evidence
	all         []string            // the task's evidence, in plan order
	counter     *tokens.Counter
}

// newEvidenceFake starts a fake whose planner answers planReply and whose
// sub-agents and synthesis answer from t's evidence as described above.
// Subtasks are recognised by their task text, so planReply's subtasks must
// carry the texts of t's plan.
func newEvidenceFake(t *Task, planReply, outlineReply string) (*llmtest.Server, error) {
	c, err := tokens.New(ProviderEncoding)
	if err != nil {
		return nil, err
	}
	f := &evidenceFake{plan: planReply, outlinePlan: outlineReply, bySubtask: map[string][]string{}, counter: c}
	for i, st := range t.Parsed.Subtasks {
		f.bySubtask[st.Task] = t.Evidence[i]
		for _, e := range t.Evidence[i] {
			if !slices.Contains(f.all, e) {
				f.all = append(f.all, e)
			}
		}
	}
	return llmtest.New(llmtest.Func(f.reply)), nil
}

func (f *evidenceFake) reply(req llmtest.RecordedRequest) llmtest.Reply {
	var text string
	switch {
	case f.outlinePlan != "" && strings.Contains(req.System, outlineMarker):
		text = f.outlinePlan
	case strings.Contains(req.System, plannerMarker):
		text = f.plan
	case strings.Contains(req.System, synthesisMarker):
		text = quote(f.all, userText(req), noResultsReply)
	default:
		ctx, sub := splitSubagentPrompt(userText(req))
		ev, ok := f.bySubtask[sub]
		if !ok {
			// A subtask the plan did not script (a map or reduce call,
			// say): it may quote any of the task's evidence it was sent.
			ev = f.all
		}
		text = quote(ev, ctx, noEvidenceReply)
	}
	// Usage as a provider with another tokenizer would report it: the
	// system prompt and every turn, and the reply.
	in := f.counter.Count(req.System)
	for _, m := range req.Messages {
		in += f.counter.Count(m.PromptText())
	}
	u := llm.Usage{InputTokens: int64(in), OutputTokens: int64(f.counter.Count(text))}
	return llmtest.Reply{Text: text, Usage: &u}
}

// quote is each of sentences that occurs in text, one per line, or none.
func quote(sentences []string, text, none string) string {
	var b strings.Builder
	for _, e := range sentences {
		if strings.Contains(text, e) {
			b.WriteString("> ")
			b.WriteString(e)
			b.WriteByte('\n')
		}
	}
	if b.Len() == 0 {
		return none
	}
	return b.String()
}

func userText(req llmtest.RecordedRequest) string {
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			b.WriteString(m.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// splitSubagentPrompt separates a sub-agent's user message into the context
// block it was sent and its subtask line (orchestrate's subagentUser).
func splitSubagentPrompt(user string) (context, subtask string) {
	// Only the text between the tags counts: evidence quoted elsewhere in
	// the prompt (the task, a result) was not sent as context.
	if _, body, ok := strings.Cut(user, "<context>\n"); ok {
		if i := strings.LastIndex(body, "</context>\n"); i >= 0 {
			context = body[:i]
		}
	}
	if _, after, ok := strings.Cut(user, "Your subtask: "); ok {
		subtask, _, _ = strings.Cut(after, "\n")
	}
	return context, subtask
}

// EvidenceScore says where a run's evidence sentences went.
type EvidenceScore struct {
	// Sentences counts the evidence sentences of the delegated subtasks
	// (one per subtask that needs it, so a sentence two subtasks need
	// counts twice).
	Sentences int
	// InSlice counts those present in the slice their subtask was sent,
	// when that slice was cut by its pointers.
	InSlice int
	// ViaFallback counts those present only because the subtask was sent
	// the whole context: never counted as recall.
	ViaFallback int
	// Fallbacks counts delegated subtasks sent the whole context.
	Fallbacks int
	// Answer counts the task's distinct evidence sentences of delegated
	// subtasks, and AnswerHeld how many of them the final answer holds.
	Answer, AnswerHeld int
}

func (s *EvidenceScore) add(o EvidenceScore) {
	s.Sentences += o.Sentences
	s.InSlice += o.InSlice
	s.ViaFallback += o.ViaFallback
	s.Fallbacks += o.Fallbacks
	s.Answer += o.Answer
	s.AnswerHeld += o.AnswerHeld
}

// Missed counts evidence sentences that were not in what their subtask was
// sent.
func (s EvidenceScore) Missed() int { return s.Sentences - s.InSlice - s.ViaFallback }

// scoreEvidence reads, from the requests the fake received, the context each
// delegated subtask was actually sent, and from the record whether it was a
// fallback and what the final answer holds.
func scoreEvidence(t *Task, rec *orchestrate.Record, reqs []llmtest.RecordedRequest) EvidenceScore {
	sent := map[string]string{} // subtask text → context of its last answered request
	for _, r := range reqs {
		if r.Status != 200 || strings.Contains(r.System, plannerMarker) || strings.Contains(r.System, synthesisMarker) {
			continue
		}
		ctx, sub := splitSubagentPrompt(userText(r))
		sent[sub] = ctx
	}
	evidence := map[string][]string{}
	for i, st := range t.Parsed.Subtasks {
		evidence[st.Task] = t.Evidence[i]
	}
	var s EvidenceScore
	var answer []string
	for _, st := range rec.Subtasks {
		if st.Mode != orchestrate.ModeDelegated {
			continue
		}
		fallback := st.Slice != nil && st.Slice.Fallback
		if fallback {
			s.Fallbacks++
		}
		ctx := sent[st.Task]
		for _, e := range evidence[st.Task] {
			s.Sentences++
			if !slices.Contains(answer, e) {
				answer = append(answer, e)
			}
			switch {
			case !strings.Contains(ctx, e):
			case fallback:
				s.ViaFallback++
			default:
				s.InSlice++
			}
		}
	}
	s.Answer = len(answer)
	for _, e := range answer {
		if strings.Contains(rec.Answer, e) {
			s.AnswerHeld++
		}
	}
	return s
}

// counterFor is baton's counter for ModelName, the one orchestrate uses.
func counterFor() *tokens.Counter { return tokens.ForModel(ModelName) }
