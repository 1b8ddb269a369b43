package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// The manifests in examples/deploy are decoded strictly into the
// Kubernetes API types (an unknown or misspelt field fails), checked for
// what would break a deployment of several replicas, and their command
// line is run by the real binary against a real Postgres.

// deployManifests is every object examples/deploy declares.
type deployManifests struct {
	configMap  *corev1.ConfigMap
	deployment *appsv1.Deployment
	service    *corev1.Service
	pdb        *policyv1.PodDisruptionBudget
	readme     string
}

func readDeployManifests(t *testing.T) *deployManifests {
	t.Helper()
	dir := filepath.Join(root, "examples", "deploy")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s (%v)", dir, err)
	}
	m := &deployManifests{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(b) {
			if err := m.decode(doc); err != nil {
				t.Fatalf("%s, document %d: %v", filepath.Base(f), i+1, err)
			}
		}
	}
	if m.configMap == nil || m.deployment == nil || m.service == nil || m.pdb == nil {
		t.Fatalf("examples/deploy must declare a ConfigMap, a Deployment, a Service and a PodDisruptionBudget; got %+v", m)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m.readme = string(readme)
	return m
}

// splitYAML cuts a file into its non-empty YAML documents.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(b), -1) {
		if strings.TrimSpace(regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(d, "")) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

// decode reads one document strictly into the type its apiVersion and
// kind name; a kind the test does not know, or a second of one, is an
// error.
func (m *deployManifests) decode(doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	var target any
	var once bool
	switch head.APIVersion + " " + head.Kind {
	case "v1 ConfigMap":
		once, m.configMap = m.configMap == nil, &corev1.ConfigMap{}
		target = m.configMap
	case "apps/v1 Deployment":
		once, m.deployment = m.deployment == nil, &appsv1.Deployment{}
		target = m.deployment
	case "v1 Service":
		once, m.service = m.service == nil, &corev1.Service{}
		target = m.service
	case "policy/v1 PodDisruptionBudget":
		once, m.pdb = m.pdb == nil, &policyv1.PodDisruptionBudget{}
		target = m.pdb
	default:
		return fmt.Errorf("%s %s: a kind this test does not check; add it here", head.APIVersion, head.Kind)
	}
	if !once {
		return fmt.Errorf("a second %s", head.Kind)
	}
	return yaml.UnmarshalStrict(doc, target)
}

func (m *deployManifests) container(t *testing.T) *corev1.Container {
	t.Helper()
	cs := m.deployment.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers; the checks below expect the one toolwarden container", len(cs))
	}
	return &cs[0]
}

// commandLine is the container's command and args as one argv.
func commandLine(c *corev1.Container) []string {
	return append(append([]string{}, c.Command...), c.Args...)
}

// flagValue is the value after flag in argv ("" when absent).
func flagValue(argv []string, flag string) string {
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			return argv[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// loadedConfig is the ConfigMap's config.toml through toolwarden's own
// loader, verbatim.
func (m *deployManifests) loadedConfig(t *testing.T) *config.Config {
	t.Helper()
	toml, ok := m.configMap.Data["config.toml"]
	if !ok {
		t.Fatalf("the ConfigMap has no config.toml")
	}
	cfg, err := config.LoadBytes("config.toml", []byte(toml))
	if err != nil {
		t.Fatalf("the ConfigMap's config.toml is refused by toolwarden's config loader: %v", err)
	}
	return cfg
}

// volumeAt is the volume mounted at the directory holding path, and its
// mount.
func volumeAt(t *testing.T, pod corev1.PodSpec, c *corev1.Container, path string) (corev1.Volume, corev1.VolumeMount) {
	t.Helper()
	var best corev1.VolumeMount
	for _, vm := range c.VolumeMounts {
		if strings.HasPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/") && len(vm.MountPath) > len(best.MountPath) {
			best = vm
		}
	}
	for _, v := range pod.Volumes {
		if best.Name != "" && v.Name == best.Name {
			return v, best
		}
	}
	t.Fatalf("%s is on no mounted volume: it would be read from (or written to) the image", path)
	return corev1.Volume{}, corev1.VolumeMount{}
}

func TestTheDeployManifestsDecodeStrictlyAndHoldWhatSeveralReplicasNeed(t *testing.T) {
	m := readDeployManifests(t)
	d := m.deployment
	pod := d.Spec.Template.Spec
	c := m.container(t)
	argv := commandLine(c)

	t.Run("several replicas, and a disruption budget that keeps some", func(t *testing.T) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
			t.Fatalf("replicas = %v; a team gateway on a shared store runs at least 2", d.Spec.Replicas)
		}
		mu := m.pdb.Spec.MaxUnavailable
		if mu == nil || mu.Type != intstr.Int || int32(mu.IntValue()) >= *d.Spec.Replicas || mu.IntValue() < 1 {
			t.Fatalf("PodDisruptionBudget maxUnavailable = %v; want a number from 1 to replicas-1", mu)
		}
	})

	t.Run("the selectors of the Deployment, Service and budget pick the pods", func(t *testing.T) {
		labels := d.Spec.Template.Labels
		for what, sel := range map[string]map[string]string{
			"Deployment.spec.selector": d.Spec.Selector.MatchLabels,
			"Service.spec.selector":    m.service.Spec.Selector,
			"PodDisruptionBudget":      m.pdb.Spec.Selector.MatchLabels,
		} {
			if len(sel) == 0 {
				t.Errorf("%s is empty", what)
			}
			for k, v := range sel {
				if labels[k] != v {
					t.Errorf("%s %s=%s does not match the pod's labels %v", what, k, v, labels)
				}
			}
		}
	})

	t.Run("the probes and the Service reach the port serve listens on", func(t *testing.T) {
		if len(c.Command) == 0 || filepath.Base(c.Command[0]) != "toolwarden" || len(c.Args) == 0 || c.Args[0] != "serve" {
			t.Fatalf("command line %q: want toolwarden serve ...", argv)
		}
		_, port, err := net.SplitHostPort(flagValue(argv, "--listen"))
		if err != nil {
			t.Fatalf("--listen %q: %v", flagValue(argv, "--listen"), err)
		}
		if len(c.Ports) != 1 || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
			t.Fatalf("container ports %+v; want exactly the --listen port %s", c.Ports, port)
		}
		resolves := func(p intstr.IntOrString) bool {
			return (p.Type == intstr.String && p.StrVal == c.Ports[0].Name) || (p.Type == intstr.Int && strconv.Itoa(p.IntValue()) == port)
		}
		for what, want := range map[string]struct {
			probe *corev1.Probe
			path  string
		}{"livenessProbe": {c.LivenessProbe, "/healthz"}, "readinessProbe": {c.ReadinessProbe, "/readyz"}} {
			p := want.probe
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != want.path || !resolves(p.HTTPGet.Port) {
				t.Errorf("%s %+v; want an HTTP GET of %s on the container port %s", what, p, want.path, port)
			}
		}
		if len(m.service.Spec.Ports) != 1 || !resolves(m.service.Spec.Ports[0].TargetPort) {
			t.Errorf("Service ports %+v; want one whose targetPort is the container port", m.service.Spec.Ports)
		}
	})

	t.Run("the store URL comes from a Secret and not from the command line", func(t *testing.T) {
		var ref *corev1.SecretKeySelector
		for _, e := range c.Env {
			if e.Name == "TOOLWARDEN_STORE" {
				if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
					t.Fatalf("TOOLWARDEN_STORE is %+v; want valueFrom.secretKeyRef (the URL holds a password)", e)
				}
				ref = e.ValueFrom.SecretKeyRef
			}
		}
		if ref == nil {
			t.Fatal("no TOOLWARDEN_STORE in the container's env: every replica would use its own SQLite file")
		}
		if flagValue(argv, "--store") != "" {
			t.Fatal("--store on the command line shows the store's password in ps and in the pod spec")
		}
		readmeCreates(t, m.readme, ref.Name, ref.Key)
	})

	t.Run("every replica reads the same session secret and tokens file from Secrets", func(t *testing.T) {
		cfg := m.loadedConfig(t)
		files := map[string]string{
			"[serve] session_secret_file": cfg.Serve.SessionSecretFile,
			"[serve.auth] tokens_file":    cfg.Serve.Auth.TokensFile,
		}
		for key, path := range files {
			if path == "" {
				t.Fatalf("%s is not set: each replica would draw its own secret (or serve no one)", key)
			}
			v, vm := volumeAt(t, pod, c, path)
			if v.Secret == nil || v.Secret.SecretName == "" {
				t.Fatalf("%s %s is on volume %q, not a Secret: replicas would not share it", key, path, v.Name)
			}
			if vm.SubPath != "" {
				t.Errorf("%s is mounted with subPath: an updated Secret never reaches the pod", key)
			}
			readmeCreates(t, m.readme, v.Secret.SecretName, strings.TrimPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/"))
		}
	})

	t.Run("the config file comes from the ConfigMap", func(t *testing.T) {
		path := flagValue(argv, "--config")
		v, vm := volumeAt(t, pod, c, path)
		if v.ConfigMap == nil || v.ConfigMap.Name != m.configMap.Name {
			t.Fatalf("--config %s is on volume %q, not the ConfigMap %s", path, v.Name, m.configMap.Name)
		}
		if key := strings.TrimPrefix(path, strings.TrimSuffix(vm.MountPath, "/")+"/"); m.configMap.Data[key] == "" {
			t.Fatalf("--config %s names %q, which the ConfigMap does not hold", path, key)
		}
	})

	t.Run("a hardened container that can still write what serve writes", func(t *testing.T) {
		sc := c.SecurityContext
		psc := pod.SecurityContext
		switch {
		case sc == nil || psc == nil:
			t.Fatal("no securityContext")
		case !isTrue(sc.RunAsNonRoot) && !isTrue(psc.RunAsNonRoot):
			t.Error("runAsNonRoot is not set")
		case !isTrue(sc.ReadOnlyRootFilesystem):
			t.Error("readOnlyRootFilesystem is not set")
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Error("allowPrivilegeEscalation is not false")
		case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0:
			t.Errorf("capabilities %+v; want drop ALL and add none", sc.Capabilities)
		case c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero():
			t.Errorf("resources %+v; want cpu and memory requests and a memory limit", c.Resources)
		}
		// The root is read-only: the audit log and HOME must be on writable volumes.
		writable := map[string]string{"--audit": flagValue(argv, "--audit")}
		for _, e := range c.Env {
			if e.Name == "HOME" {
				writable["HOME"] = e.Value
			}
		}
		for what, path := range writable {
			if path == "" || path == "off" {
				t.Errorf("%s is not set to a path on a writable volume", what)
				continue
			}
			if _, vm := volumeAt(t, pod, c, path+"/x"); vm.ReadOnly {
				t.Errorf("%s %s is on a read-only mount", what, path)
			}
		}
	})

	t.Run("the pod outlives serve's shutdown grace", func(t *testing.T) {
		grace, err := time.ParseDuration(flagValue(argv, "--shutdown-grace"))
		if err != nil {
			grace = 30 * time.Second // serve's default
		}
		if p := pod.TerminationGracePeriodSeconds; p == nil || time.Duration(*p)*time.Second <= grace {
			t.Fatalf("terminationGracePeriodSeconds %v is not above --shutdown-grace %s: calls in flight would be SIGKILLed", p, grace)
		}
	})
}

func isTrue(b *bool) bool { return b != nil && *b }

// readmeCreates fails the test unless the README tells how to create
// Secret name holding key (kubectl create secret generic NAME
// --from-file=KEY=... or --from-literal=KEY=...).
func readmeCreates(t *testing.T, readme, name, key string) {
	t.Helper()
	readme = regexp.MustCompile(`\\\n\s*`).ReplaceAllString(readme, " ") // join continued shell lines
	re := regexp.MustCompile(`kubectl create secret generic ` + regexp.QuoteMeta(name) + `\b[^\n]*--from-(?:file|literal)=` + regexp.QuoteMeta(key) + `=`)
	if !re.MatchString(readme) {
		t.Errorf("examples/deploy/README.md does not say how to create Secret %s with key %s (kubectl create secret generic %s --from-...=%s=...)", name, key, name, key)
	}
}

// TestTheDeployedCommandLineServesAndIsReady runs the container's own
// command line with the real binary: every mount replaced by a temporary
// directory holding what Kubernetes would put there, the env as the
// manifest writes it, TOOLWARDEN_STORE pointing at a real Postgres
// database, and only the port changed (to a free one). It must listen,
// report ready once the upstream started, and have migrated the store.
func TestTheDeployedCommandLineServesAndIsReady(t *testing.T) {
	m := readDeployManifests(t)
	c := m.container(t)
	db := pgtest.Shared(t)
	fsServer := npmServer(t, "mcp-server-filesystem")
	cfg := m.loadedConfig(t)

	dir := t.TempDir()
	rewrite := mountRewriter(c, dir)
	for _, vm := range c.VolumeMounts {
		if err := os.MkdirAll(rewrite(vm.MountPath), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, content string) {
		if err := os.WriteFile(rewrite(path), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(flagValue(commandLine(c), "--config"), rewrite(m.configMap.Data["config.toml"]))
	write(cfg.Serve.SessionSecretFile, randomHexString(t, 32)+"\n")
	token := randomHexString(t, 24)
	sum := sha256.Sum256([]byte(token))
	write(cfg.Serve.Auth.TokensFile, fmt.Sprintf(`{"sha256:%x": {"principal": "alice", "groups": ["dev"]}}`, sum))

	args := commandLine(c)[1:] // the binary under test stands for "toolwarden"
	for i, a := range args {
		args[i] = rewrite(a)
	}
	host, _, _ := net.SplitHostPort(flagValue(args, "--listen"))
	args = replaceFlag(args, "--listen", net.JoinHostPort(host, "0"))
	env := []string{"PATH=" + filepath.Dir(fsServer) + string(os.PathListSeparator) + os.Getenv("PATH"), "TOOLWARDEN_STORE=" + db.URL}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+rewrite(e.Value))
		}
	}

	s := launchServe(t, twBin, env, args[1:]...)
	s.waitListening(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.base, "http://"))
	base := "http://127.0.0.1:" + port
	eventually(t, 60*time.Second, "/readyz to answer 200", func() bool { return httpStatus(base+"/readyz", "") == http.StatusOK })
	if code := httpStatus(base+"/healthz", ""); code != http.StatusOK {
		t.Fatalf("/healthz answered %d", code)
	}
	if out, err := db.Cluster.Query(db.Name, "SELECT count(*) > 0 FROM tw_migrations"); err != nil || out != "t" {
		t.Fatalf("serve did not migrate the store named by TOOLWARDEN_STORE: %q, %v\n%s", out, err, s.log.String())
	}
}

// mountRewriter maps every path under a mount of c to the same path under
// dir/<volume>, longest mount first, in one pass (a rewritten path is
// never rewritten again).
func mountRewriter(c *corev1.Container, dir string) func(string) string {
	mounts := append([]corev1.VolumeMount{}, c.VolumeMounts...)
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i].MountPath) > len(mounts[j].MountPath) })
	var pairs []string
	for _, vm := range mounts {
		pairs = append(pairs, vm.MountPath, filepath.Join(dir, vm.Name))
	}
	r := strings.NewReplacer(pairs...)
	return r.Replace
}

func replaceFlag(argv []string, flag, value string) []string {
	out := append([]string{}, argv...)
	for i, a := range out {
		if a == flag && i+1 < len(out) {
			out[i+1] = value
		}
	}
	return out
}

func randomHexString(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// httpStatus is the status of a GET of url (0 when it fails).
func httpStatus(url, bearer string) int {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
