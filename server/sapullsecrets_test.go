package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
	"github.com/skiff-dev/skiff/server/servertest"
)

// TestServiceAccountPullSecrets: a pod created without imagePullSecrets
// gets its ServiceAccount's (the default one when it names none), as
// upstream's ServiceAccount admission gives them; a pod listing its own
// keeps them; a ServiceAccount without any adds nothing; an update of the
// pod does not add them (apiserver/saadmission).
func TestServiceAccountPullSecrets(t *testing.T) {
	ts := servertest.Start(t, servertest.Options{})
	c := ts.Client()
	ctx := ctxT(t, 30*time.Second)
	resSAs := api.Lookup(resources, "v1", "serviceaccounts")
	eventually(t, 10*time.Second, "default/default service account", func() (bool, error) {
		return c.Get(ctx, resSAs, "default", "default", &api.ServiceAccount{}) == nil, nil
	})
	refs := func(names ...string) []api.LocalObjectReference {
		var out []api.LocalObjectReference
		for _, n := range names {
			out = append(out, api.LocalObjectReference{Name: n})
		}
		return out
	}
	names := func(rs []api.LocalObjectReference) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	if err := c.Create(ctx, resSAs, "default", &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "bare"}}); err != nil {
		t.Fatal(err)
	}
	puller := &api.ServiceAccount{ObjectMeta: api.ObjectMeta{Name: "puller"}, ImagePullSecrets: refs("regcred", "backup")}
	if err := c.Create(ctx, resSAs, "default", puller); err != nil {
		t.Fatal(err)
	}
	var def api.ServiceAccount
	if err := c.Get(ctx, resSAs, "default", "default", &def); err != nil {
		t.Fatal(err)
	}
	def.ImagePullSecrets = refs("default-cred")
	if err := c.Update(ctx, resSAs, "default", &def); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, sa string
		own      []string
		want     []string
	}{
		{name: "from-puller", sa: "puller", want: []string{"regcred", "backup"}},
		{name: "from-default", want: []string{"default-cred"}},
		{name: "own", sa: "puller", own: []string{"mine"}, want: []string{"mine"}},
		{name: "bare-sa", sa: "bare", want: nil},
	} {
		pod := &api.Pod{ObjectMeta: api.ObjectMeta{Name: tc.name}, Spec: api.PodSpec{ServiceAccountName: tc.sa,
			ImagePullSecrets: refs(tc.own...), Containers: []api.Container{{Name: "c", Image: "busybox"}}}}
		if err := c.Create(ctx, resPods, "default", pod); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var got api.Pod
		if err := c.Get(ctx, resPods, "default", tc.name, &got); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(got.Spec.ImagePullSecrets), tc.want) {
			t.Errorf("%s: imagePullSecrets %v, want %v", tc.name, names(got.Spec.ImagePullSecrets), tc.want)
		}
	}
	// Only a create gets them: the pod of the bare ServiceAccount keeps
	// none through an update, even once that ServiceAccount has some.
	var bare api.ServiceAccount
	if err := c.Get(ctx, resSAs, "default", "bare", &bare); err != nil {
		t.Fatal(err)
	}
	bare.ImagePullSecrets = refs("late")
	if err := c.Update(ctx, resSAs, "default", &bare); err != nil {
		t.Fatal(err)
	}
	// The scheduler may write the pod between the GET and the PUT: a 409
	// is retried on a fresh copy.
	var p api.Pod
	for i := 0; ; i++ {
		if err := c.Get(ctx, resPods, "default", "bare-sa", &p); err != nil {
			t.Fatal(err)
		}
		p.Labels = map[string]string{"touched": "yes"}
		err := c.Update(ctx, resPods, "default", &p)
		if err == nil {
			break
		}
		if !client.IsConflict(err) || i == 10 {
			t.Fatal(err)
		}
	}
	if len(p.Spec.ImagePullSecrets) != 0 {
		t.Fatalf("an update added %v", names(p.Spec.ImagePullSecrets))
	}
}
