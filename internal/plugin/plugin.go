package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Defaults for a policy's limits (pdk/ABI.md section 6).
const (
	DefaultTimeout     = 100 * time.Millisecond
	DefaultMemoryLimit = 64 << 20
	DefaultMaxOutput   = 64 << 10
)

// Plugin is one loaded [policies.<name>]: a compiled module, its config and
// limits, and a pool of warm instances. It implements policy.Checker,
// policy.Observer and policy.Lister and is safe for concurrent use.
//
// A plugin that failed to load is still a *Plugin: every event answers with
// its on_error verdict and the load error (fail closed, keep serving).
type Plugin struct {
	rt     *Runtime
	log    *slog.Logger // where its log messages go (LogTo)
	name   string
	source string // "plugin:<name>", for reasons
	pos    config.Position

	apps, tools []glob
	canApprove  bool
	onError     policy.Verdict

	timeout     time.Duration
	initTimeout time.Duration
	memLimit    uint64
	maxOutput   int
	resultLimit int // bytes of a result observe sees; 0: the host's cut, at most maxResultText

	mod    *module
	config []byte // the config table as JSON
	head   [5][]byte
	tail   []byte // the whole plugin block: describe and init
	// omit are the input parts the plugin does not read (needs.go; zero:
	// it reads everything); evTail, when set, closes its list, check and
	// observe envelopes with the plugin block it needs.
	omit   needs
	evTail []byte
	desc   Description
	events uint8 // bit per Event the plugin handles
	// stateful: the plugin asked for session state (guest_state.go).
	stateful bool
	// deterministic: the plugin's check output depends on its input alone
	// (deterministic.go).
	deterministic bool
	// data is the policy's data file, delivered by init (data.go); inits
	// counts the deliveries.
	data  []byte
	inits atomic.Int64
	pool  *pool

	loadErr *Fault
}

var (
	_ policy.Checker  = (*Plugin)(nil)
	_ policy.Observer = (*Plugin)(nil)
	_ policy.Lister   = (*Plugin)(nil)
)

// Builtins are the modules a policy may name with builtin = "<name>", by
// name. The engine ships none of its own: the program hands it the
// first-party modules (package plugins), so that the runtime never depends
// on the content it runs.
type Builtins map[string][]byte

// names lists the built-in modules, sorted, for error messages.
func (b Builtins) names() string {
	if len(b) == 0 {
		return "none in this program"
	}
	out := make([]string, 0, len(b))
	for n := range b {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// testBuiltins stand in for a nil Builtins in this package's own tests
// (builtins_test.go sets them); in the program they are nil, and a caller
// that passes no modules has none.
var testBuiltins Builtins

// Load loads one policy: reads or resolves its module, checks the ABI,
// compiles it (once per distinct binary, serially), instantiates one warm
// instance and sends describe. builtins are the modules builtin = "<name>"
// may name.
//
// On failure Load returns the error and also a usable *Plugin that answers
// every event with the policy's on_error verdict and that error. Disabled
// policies are not Load's business: see LoadAll.
func Load(ctx context.Context, rt *Runtime, pol *config.Policy, builtins Builtins, opts ...LoadOption) (*Plugin, error) {
	p, err := newPlugin(rt, pol, opts...)
	if err != nil {
		p.loadErr = p.fault(FaultLoad, err.Error(), err)
		return p, p.loadErr
	}
	if err := p.load(ctx, pol, builtins); err != nil {
		p.loadErr = p.fault(FaultLoad, err.Error(), err)
		return p, p.loadErr
	}
	return p, nil
}

// LoadAll loads every enabled policy, in config order. It returns one
// *Plugin per enabled policy, including those that failed to load (they
// answer with their on_error verdict), and an error that lists each failure
// with its policy's position in the config, one per line.
func LoadAll(ctx context.Context, rt *Runtime, pols []*config.Policy, builtins Builtins, opts ...LoadOption) ([]*Plugin, error) {
	var out []*Plugin
	var errs []error
	for _, pol := range pols {
		if !config.Bool(pol.Enabled, true) {
			continue
		}
		p, err := Load(ctx, rt, pol, builtins, opts...)
		out = append(out, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: policies.%s: %w", pol.Pos, pol.Name, err))
		}
	}
	return out, errors.Join(errs...)
}

// A LoadOption changes how Load, LoadAll and FromBytes load a plugin.
type LoadOption func(*Plugin)

// LogTo sends the plugin's log messages to l rather than to its runtime's
// Options.Logger: hosts that share one runtime (a warm hook process)
// each keep their own log. A nil l changes nothing.
func LogTo(l *slog.Logger) LoadOption {
	return func(p *Plugin) {
		if l != nil {
			p.log = l
		}
	}
}

func newPlugin(rt *Runtime, pol *config.Policy, opts ...LoadOption) (*Plugin, error) {
	p := &Plugin{
		rt:         rt,
		log:        rt.log,
		name:       pol.Name,
		source:     policy.StepPlugin + ":" + pol.Name,
		pos:        pol.Pos,
		canApprove: pol.CanApprove,
		onError:    policy.Deny,
		timeout:    DefaultTimeout,
		memLimit:   DefaultMemoryLimit,
		maxOutput:  DefaultMaxOutput,
	}
	var errs []string
	switch pol.OnError {
	case "", "deny":
	case "ask":
		p.onError = policy.Ask
	case "abstain":
		p.onError = policy.Abstain
	default:
		errs = append(errs, fmt.Sprintf("on_error = %q: want \"deny\", \"ask\" or \"abstain\"", pol.OnError))
	}
	if pol.TimeoutMs < 0 || pol.MemoryLimitMB < 0 || pol.MaxOutputKB < 0 {
		errs = append(errs, "timeout_ms, memory_limit_mb and max_output_kb must not be negative")
	}
	if pol.TimeoutMs > 0 {
		p.timeout = time.Duration(pol.TimeoutMs) * time.Millisecond
	}
	if pol.MemoryLimitMB > 0 {
		if pol.MemoryLimitMB > 4096 {
			errs = append(errs, "memory_limit_mb is over 4096 (wasm32 memories cannot be larger)")
		}
		p.memLimit = uint64(pol.MemoryLimitMB) << 20
	}
	if pol.MaxOutputKB > 0 {
		p.maxOutput = pol.MaxOutputKB << 10
	}
	if pol.ResultLimitKB > 0 {
		p.resultLimit = min(pol.ResultLimitKB, config.MaxResultLimitKB) << 10
	}
	p.initTimeout = max(rt.opts.InitTimeout, p.timeout)
	for _, a := range pol.Apps {
		p.apps = append(p.apps, compileGlob(a))
	}
	for _, t := range pol.Tools {
		p.tools = append(p.tools, compileGlob(t))
	}
	p.pool = newPool(p, rt.poolMax)
	for _, o := range opts {
		o(p)
	}
	if len(errs) > 0 {
		return p, errors.New(strings.Join(errs, "; "))
	}
	return p, nil
}

func (p *Plugin) load(ctx context.Context, pol *config.Policy, builtins Builtins) error {
	bin, err := source(pol, builtins)
	if err != nil {
		return err
	}
	if pol.Config == nil {
		p.config = []byte(`{}`)
	} else if p.config, err = json.Marshal(pol.Config); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if p.data, err = ReadData(pol.Data); err != nil {
		return err
	}
	return p.start(ctx, bin)
}

// start compiles the binary, checks it, warms one instance and describes it.
func (p *Plugin) start(ctx context.Context, bin []byte) error {
	for ev := range p.head {
		p.head[ev] = head(Event(ev))
	}
	p.tail = tail(p.name, p.config)
	p.omit, p.evTail = 0, nil
	mod, err := p.rt.compile(ctx, bin)
	if err != nil {
		return err
	}
	p.mod = mod
	if min := uint64(mod.minMemPages) << 16; min > p.memLimit {
		return fmt.Errorf("the module's memory starts at %s, over memory_limit_mb (%s)", mib(min), mib(p.memLimit))
	}
	p.rt.mu.Lock()
	if p.rt.closed {
		p.rt.mu.Unlock()
		return errClosed
	}
	p.rt.plugins = append(p.rt.plugins, p)
	p.rt.mu.Unlock()

	in, err := p.pool.get(ctx)
	if err != nil {
		return err
	}
	out, code, f := in.describe(ctx)
	if f != nil {
		p.pool.discard(in)
		return fmt.Errorf("describe: %s", f.Msg)
	}
	if code != CodeOK {
		p.pool.discard(in)
		return fmt.Errorf("describe: %s", codeMessage(code, out))
	}
	desc, err := parseDescribe(out)
	if err != nil {
		p.pool.discard(in)
		return fmt.Errorf("describe: bad output: %v", err)
	}
	stateful, err := parseDescribeState(out)
	if err != nil {
		p.pool.discard(in)
		return fmt.Errorf("describe: bad output: %v", err)
	}
	n, err := parseDescribeNeeds(out)
	if err != nil {
		p.pool.discard(in)
		return fmt.Errorf("describe: bad output: %v", err)
	}
	det, err := parseDescribeDeterministic(out)
	if err != nil {
		p.pool.discard(in)
		return fmt.Errorf("describe: bad output: %v", err)
	}
	p.deterministic = det && !p.rt.opts.noReuse
	if n != needAll {
		p.omit, p.evTail = needAll&^n, tailFor(p.name, p.config, n)
	}
	p.stateful = stateful
	p.desc = desc
	for _, e := range desc.Events {
		if ev, ok := ParseEvent(e); ok && ev != EventDescribe {
			p.events |= 1 << ev
		}
	}
	if p.wantsInit() {
		if err := in.initInstance(ctx); err != nil {
			p.pool.discard(in)
			return err
		}
	}
	p.pool.put(in)
	return nil
}

// source returns the module bytes of a policy.
func source(pol *config.Policy, builtins Builtins) ([]byte, error) {
	switch {
	case pol.Wasm != "" && pol.Builtin != "":
		return nil, errors.New(`set one of "wasm" and "builtin", not both`)
	case pol.Builtin != "":
		if builtins == nil {
			builtins = testBuiltins
		}
		bin, ok := builtins[pol.Builtin]
		if !ok {
			return nil, fmt.Errorf("no built-in plugin %q (built in: %s)", pol.Builtin, builtins.names())
		}
		return bin, nil
	case pol.Wasm != "":
		path := pol.Wasm
		if !filepath.IsAbs(path) && pol.Pos.File != "" {
			path = filepath.Join(filepath.Dir(pol.Pos.File), path)
		}
		bin, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return bin, nil
	}
	return nil, errors.New(`set "wasm" (a path to a .wasm file) or "builtin" (built in: ` + builtins.names() + ")")
}

// FromBytes loads a plugin from module bytes, with limits and config taken
// from pol (its Wasm and Builtin fields are ignored). Tools such as
// `toolwarden plugin test` use it; hosts use Load.
func FromBytes(ctx context.Context, rt *Runtime, pol *config.Policy, bin []byte, opts ...LoadOption) (*Plugin, error) {
	p, err := newPlugin(rt, pol, opts...)
	if err == nil {
		if pol.Config == nil {
			p.config = []byte(`{}`)
		} else {
			p.config, err = json.Marshal(pol.Config)
		}
	}
	if err == nil {
		p.data, err = ReadData(pol.Data)
	}
	if err == nil {
		err = p.start(ctx, bin)
	}
	if err != nil {
		p.loadErr = p.fault(FaultLoad, err.Error(), err)
		return p, p.loadErr
	}
	return p, nil
}

// Name is the [policies.<name>] key.
func (p *Plugin) Name() string { return p.name }

// ReasonSource is "plugin:<name>" (policy.ReasonSourcer), rendered once.
func (p *Plugin) ReasonSource() string { return p.source }

// Pos is where the policy is defined in the config.
func (p *Plugin) Pos() config.Position { return p.pos }

// CanApprove reports whether an allow from this plugin may lift a baseline ask.
func (p *Plugin) CanApprove() bool { return p.canApprove }

// OnError is the verdict used when the plugin fails.
func (p *Plugin) OnError() policy.Verdict { return p.onError }

// Err is the load error, or nil when the plugin loaded.
func (p *Plugin) Err() error {
	if p.loadErr == nil {
		return nil
	}
	return p.loadErr
}

// Description is the plugin's answer to describe (zero if it failed to load).
func (p *Plugin) Description() Description { return p.desc }

// Handles reports whether the plugin asked for an event in describe. A
// plugin that failed to load handles every event (with its on_error verdict).
func (p *Plugin) Handles(ev Event) bool {
	return p.loadErr != nil || ev == EventDescribe || p.events&(1<<ev) != 0
}

// Matches reports whether the policy applies to this app and tool: every
// listed glob set (apps, tools) has a match; an empty set matches all.
func (p *Plugin) Matches(app, tool string) bool {
	return matchAny(p.apps, app) && matchAny(p.tools, tool)
}

// Close frees the plugin's instances. Later events fail with FaultClosed,
// and so do running ones, which are stopped at their next check. The
// runtime forgets the plugin, so a runtime that outlives its plugins (one
// shared by many hosts) does not collect them; its compiled code stays.
func (p *Plugin) Close() {
	p.pool.close()
	p.rt.forget(p)
}

func (p *Plugin) failVerdict(err *Fault) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: p.onError, Code: policy.CodePluginError, Reason: err.Error(), Err: err}
}

func (p *Plugin) acquire(ctx context.Context) (*instance, *Fault) {
	if p.loadErr != nil {
		return nil, p.loadErr
	}
	in, err := p.pool.get(ctx)
	if err != nil {
		if errors.Is(err, errClosed) {
			return nil, p.fault(FaultClosed, "closed", err)
		}
		if ctx.Err() != nil {
			return nil, p.fault(FaultCanceled, "canceled waiting for an instance: "+err.Error(), err)
		}
		return nil, p.fault(FaultLoad, err.Error(), err)
	}
	return in, nil
}

// release returns an instance after an event; f is the event's fault.
func (p *Plugin) release(in *instance, f *Fault) {
	if cap(in.buf) > 256<<10 {
		in.buf = nil // do not pin a one-off huge envelope
	}
	if f != nil && f.Kind != FaultInputTooLarge && !(f.Kind == FaultCanceled && !in.retire) {
		in.retire = true
	}
	p.pool.put(in)
}

// Check runs the check event (policy.Checker). It never fails: a failure is
// the plugin's on_error verdict with Err set and a reason naming the plugin
// and the fault. The returned Labels slice may be shared with later calls:
// do not modify it.
func (p *Plugin) Check(ctx context.Context, c *policy.CheckInput) policy.PluginVerdict {
	if !p.Handles(EventCheck) {
		return policy.PluginVerdict{Verdict: policy.Abstain}
	}
	if p.stateful && c.State != nil {
		return p.checkStateful(ctx, c)
	}
	in, f := p.acquire(ctx)
	if f != nil {
		return p.failVerdict(f)
	}
	in.buf = in.appendCheck(in.buf[:0], c)
	if p.deterministic {
		if v, ok := in.last.reuse(in.buf); ok {
			p.release(in, nil)
			return v
		}
	}
	v, f := in.check(ctx, in.buf)
	if p.deterministic {
		in.last.keep(in.buf, v, f)
	}
	p.release(in, f)
	if f != nil {
		return p.failVerdict(f)
	}
	return v
}

func (in *instance) check(ctx context.Context, input []byte) (policy.PluginVerdict, *Fault) {
	out, code, f := in.call(ctx, EventCheck, input)
	if f != nil {
		return policy.PluginVerdict{}, f
	}
	if code == CodeNotHandled || code == CodeOK && len(out) == 0 {
		return policy.PluginVerdict{Verdict: policy.Abstain}, nil
	}
	if code != CodeOK {
		return policy.PluginVerdict{}, in.codeFault(code, out)
	}
	if in.memo.hit(EventCheck, out) {
		return in.memo.verdict, nil
	}
	v, err := parseCheck(out)
	if err != nil {
		return v, in.p.fault(FaultBadOutput, "bad output: "+err.Error(), err)
	}
	// Rendered once per distinct output, not per decision.
	v.Detail = policy.TraceDetail(&v)
	in.memo.store(EventCheck, out)
	in.memo.verdict = v
	return v, nil
}

// Observe runs the observe event (policy.Observer). On failure Labels is
// nil and Err is the fault. The Labels slice may be shared with later
// calls: do not modify it.
func (p *Plugin) Observe(ctx context.Context, o *policy.ObserveInput) policy.ObserveResult {
	if !p.Handles(EventObserve) {
		return policy.ObserveResult{}
	}
	if p.stateful && o.State != nil {
		return p.observeStateful(ctx, o)
	}
	in, f := p.acquire(ctx)
	if f != nil {
		return policy.ObserveResult{Err: f}
	}
	in.buf = in.appendObserve(in.buf[:0], o)
	labels, f := in.list(ctx, EventObserve, in.buf)
	p.release(in, f)
	if f != nil {
		return policy.ObserveResult{Err: f}
	}
	return policy.ObserveResult{Labels: labels}
}

// List runs the list event (policy.Lister) and returns the names of tools to
// hide. The plugin sees the whole list when its apps globs match the app,
// and may hide only tools its tools globs match. On failure it returns the
// fault; apply OnError.
func (p *Plugin) List(ctx context.Context, l *policy.ListInput) ([]string, error) {
	if !p.Handles(EventList) || !matchAny(p.apps, l.App) {
		return nil, nil
	}
	in, f := p.acquire(ctx)
	if f != nil {
		return nil, f
	}
	in.buf = in.appendList(in.buf[:0], l)
	hide, f := in.list(ctx, EventList, in.buf)
	p.release(in, f)
	if f != nil {
		return nil, f
	}
	if len(p.tools) > 0 {
		kept := make([]string, 0, len(hide))
		for _, name := range hide {
			if matchAny(p.tools, name) {
				kept = append(kept, name)
			}
		}
		hide = kept
	}
	return hide, nil
}

func (in *instance) list(ctx context.Context, ev Event, input []byte) ([]string, *Fault) {
	out, code, f := in.call(ctx, ev, input)
	if f != nil {
		return nil, f
	}
	if code == CodeNotHandled || code == CodeOK && len(out) == 0 {
		return nil, nil
	}
	if code != CodeOK {
		return nil, in.codeFault(code, out)
	}
	if in.memo.hit(ev, out) {
		return in.memo.list, nil
	}
	key := "hide"
	if ev == EventObserve {
		key = "labels"
	}
	list, err := parseList(out, key)
	if err != nil {
		return nil, in.p.fault(FaultBadOutput, "bad output: "+err.Error(), err)
	}
	in.memo.store(ev, out)
	in.memo.list = list
	return list, nil
}

func (in *instance) codeFault(code uint32, out []byte) *Fault {
	f := in.p.fault(FaultErrorCode, codeMessage(code, out), nil)
	f.Code = code
	return f
}

func codeMessage(code uint32, out []byte) string {
	msg := fmt.Sprintf("error code %d", int32(code))
	switch code {
	case CodeNotHandled:
		msg += " (not handled)"
	case CodeBadInput:
		msg += " (bad input)"
	case CodeInternal:
		msg += " (internal error)"
	case CodeBadConfig:
		msg += " (bad config)"
	}
	if len(out) > 0 {
		msg += ": " + cleanText(string(out), maxErrorText)
	}
	return msg
}

// Result is the outcome of Raw.
type Result struct {
	// Code is toolwarden_handle's return code.
	Code uint32
	// Output is a copy of what the plugin wrote.
	Output []byte
	// Verdict is set for check.
	Verdict policy.PluginVerdict
	// Labels (observe) or Hide (list).
	Labels, Hide []string
	// Description is set for describe.
	Description *Description
	Elapsed     time.Duration
}

// Raw runs one event with a caller-built input envelope and parses the
// output as the host would. It is for tools (`toolwarden plugin test`) and
// conformance tests; hosts use Check, Observe and List. The error is a
// *Fault when the plugin failed; the instance is then replaced as usual.
func (p *Plugin) Raw(ctx context.Context, ev Event, input []byte) (Result, error) {
	var res Result
	in, f := p.acquire(ctx)
	if f != nil {
		return res, f
	}
	start := time.Now()
	out, code, f := in.call(ctx, ev, input)
	res.Elapsed = time.Since(start)
	res.Code = code
	res.Output = append([]byte(nil), out...)
	if f == nil {
		f = res.parse(in, ev, code, out)
	}
	p.release(in, f)
	if f != nil {
		return res, f
	}
	return res, nil
}

func (res *Result) parse(in *instance, ev Event, code uint32, out []byte) *Fault {
	empty := code == CodeNotHandled || code == CodeOK && len(out) == 0
	if ev == EventDescribe {
		if code != CodeOK {
			return in.codeFault(code, out)
		}
		d, err := parseDescribe(out)
		if err != nil {
			return in.p.fault(FaultBadOutput, "bad output: "+err.Error(), err)
		}
		res.Description = &d
		return nil
	}
	if empty {
		return nil
	}
	if code != CodeOK {
		return in.codeFault(code, out)
	}
	var err error
	switch ev {
	case EventCheck:
		res.Verdict, err = parseCheck(out)
	case EventObserve:
		res.Labels, err = parseList(out, "labels")
	case EventList:
		res.Hide, err = parseList(out, "hide")
	default:
		if !validJSON(out) {
			err = errNotJSON
		}
	}
	if err != nil {
		return in.p.fault(FaultBadOutput, "bad output: "+err.Error(), err)
	}
	return nil
}

// ResultLimit is how many bytes of a tool result the plugin asked to see in
// observe (result_limit_kb), or 0 for the host's default cut. The host
// passes observers a result at least this long.
func (p *Plugin) ResultLimit() int { return p.resultLimit }
