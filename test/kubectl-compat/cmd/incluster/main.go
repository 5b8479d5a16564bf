// Command incluster is a client-go program for a pod: with
// rest.InClusterConfig (KUBERNETES_SERVICE_HOST/PORT, the mounted token and
// ca.crt) it lists the pods of its namespace and tries to list its
// Secrets, printing one line each, every second until SIGTERM. The e2e
// suite (test/e2e, TestInClusterClient) builds it and runs it as a pod on
// the process runtime.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	cfg, err := rest.InClusterConfig()
	if err != nil {
		fmt.Println("config error:", err)
		os.Exit(1)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println("client error:", err)
		os.Exit(1)
	}
	b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
	if err != nil {
		fmt.Println("namespace error:", err)
		os.Exit(1)
	}
	ns := strings.TrimSpace(string(b))
	fmt.Println("host", cfg.Host, "namespace", ns)
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		pods, err := cs.CoreV1().Pods(ns).List(rctx, metav1.ListOptions{})
		if err != nil {
			fmt.Println("pods error:", err)
		} else {
			var names []string
			for _, p := range pods.Items {
				names = append(names, p.Name)
			}
			sort.Strings(names)
			fmt.Printf("pods: %s\n", strings.Join(names, ","))
		}
		_, err = cs.CoreV1().Secrets(ns).List(rctx, metav1.ListOptions{})
		cancel()
		fmt.Printf("secrets: forbidden=%v err=%v\n", apierrors.IsForbidden(err), err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
