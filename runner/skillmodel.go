package runner

import (
	"fmt"
	"sync"

	"github.com/baton-dev/baton/budget"
	"github.com/baton-dev/baton/llm/modelalias"
)

// stepModel is the model one skill's steps and sub-agents send their
// requests to, and the budget its window gives.
type stepModel struct {
	name   string
	budget budget.Budget
}

// skillModels holds each skill's choice for the run, made once, so that a
// warning about a skill's model: key is given once, not at every step.
type skillModels struct {
	mu     sync.Mutex
	chosen map[string]stepModel
}

// model returns the model of this step's skill (see chooseModel).
func (s *stepRun) model() stepModel { return s.r.skillModel(s.skillName) }

func (r *runner) skillModel(skillName string) stepModel {
	r.models.mu.Lock()
	m, ok := r.models.chosen[skillName]
	var warning, note string
	if !ok {
		m, warning, note = r.chooseModel(skillName)
		if r.models.chosen == nil {
			r.models.chosen = map[string]stepModel{}
		}
		r.models.chosen[skillName] = m
	}
	r.models.mu.Unlock()
	if warning != "" {
		r.warn(warning)
	}
	if note != "" {
		r.logf("%s", note)
	}
	return m
}

// chooseModel reads the skill's model: key. The run's model is used when
// the skill names none, when --model was given explicitly (the user's
// choice for this run wins over the author's), when an external agent runs
// the step (it brings its own model), and when the provider cannot serve
// what the skill names (package modelalias); the last two are warnings,
// since the step then runs on something its author did not ask for. The
// budget's window is the chosen model's, unless the workflow sets
// window_tokens.
func (r *runner) chooseModel(skillName string) (m stepModel, warning, note string) {
	run := stepModel{name: r.cfg.ModelName, budget: r.budget}
	sk, ok := r.lib.Get(skillName)
	if !ok || sk.Model == "" {
		return run, "", ""
	}
	switch {
	case r.cfg.AgentCmd != "":
		return run, fmt.Sprintf("skill %s asks for model %q, which baton cannot pass to an external agent command; the agent uses its own model", skillName, sk.Model), ""
	case r.cfg.ModelExplicit:
		return run, "", fmt.Sprintf("skill %s asks for model %q; --model %s, given explicitly, wins", skillName, sk.Model, r.cfg.ModelName)
	}
	name, err := modelalias.Resolve(r.cfg.Provider, sk.Model)
	if err != nil {
		return run, fmt.Sprintf("skill %s: %v; its steps use %s", skillName, err, r.cfg.ModelName), ""
	}
	if name == "" || name == r.cfg.ModelName {
		return run, "", ""
	}
	window, _ := r.wf.Window(name)
	if r.cfg.ServerWindow > 0 {
		window = min(window, r.cfg.ServerWindow)
	}
	b, err := budget.New(window, r.wf.ThresholdFraction)
	if err != nil {
		// The fraction was checked with the run's budget; only a window
		// could be wrong, and the run's is a safe fallback.
		b = r.budget
	}
	return stepModel{name: name, budget: b}, "", fmt.Sprintf("skill %s: model %s (its model: %s), window %d tokens", skillName, name, sk.Model, b.Window)
}
