// Package svcalloc gives Services their ClusterIPs and NodePorts, inside the
// same store transaction that writes the Service.
//
// # Model
//
// Two in-memory allocators (ipalloc, portalloc) index what is taken. The
// store is the truth: every ClusterIP is an IPAddress object (named by the
// IP, spec.parentRef = the Service) written in the Service's own
// transaction, and every NodePort lives in its Service's spec. The hook
// (Hook.Admit) runs inside that transaction, so "allocate, write the
// IPAddress, write the Service" commits as one unit or not at all.
//
// # Invariants
//
//   - The store's commit loop runs transactions one at a time, so two
//     Services can never take the same IP or port: the second sees the
//     first's bit set.
//   - A transaction that aborts releases what it took (Outcome.OnAbort); a
//     committed delete or type change frees what the Service held only after
//     the commit (Outcome.OnCommit), so a freed address is never handed out
//     while the old owner still holds it.
//   - Repair, run once at start before the API serves, rebuilds both indexes
//     from the store: it frees IPAddresses whose Service is gone (or holds
//     another IP) and restores missing ones.
//   - Headless (clusterIP: None) and ExternalName Services take no IP.
//
// Error texts follow Kubernetes: "failed to allocate IP ...: range is full",
// "provided IP is already allocated", "provided IP is not in the valid
// range", "provided port is already allocated".
//
// # Why it imports its parent
//
// svcalloc is a plug-in of package apiserver, not a library below it: it
// implements apiserver.TxnHook, receives apiserver.Admission, answers with
// apiserver.Outcome, and returns the apiserver's Status errors (NewInvalid,
// NewConflict, ...) so that a refused allocation reads exactly like any other
// refused write. apiserver itself never imports svcalloc; package server
// installs the hook (New in server/server.go), so the arrow points one way: server ->
// svcalloc -> apiserver. Keeping it apart keeps the allocation rules (and
// their tests) out of the generic REST code.
package svcalloc
