// Package priorityadmission is Kubernetes' Priority admission plugin as a
// TxnHook of the API server, for pods and PriorityClasses.
//
// Pods, on create (not on updates, nor on subresources):
//
//   - spec.priorityClassName names a PriorityClass: spec.priority becomes
//     its value and spec.preemptionPolicy its policy. A class that does
//     not exist is 403 Forbidden: `pods "p" is forbidden: no PriorityClass
//     with name X was found`.
//   - No priorityClassName: the globalDefault class (the lowest value if
//     several are marked) gives its name, value and policy; with none,
//     priority 0 and PreemptLowerPriority.
//   - A spec.priority (or preemptionPolicy) the pod already carries that
//     differs from the computed one is 403 Forbidden, worded as upstream.
//   - An update that omits priority or preemptionPolicy keeps the stored
//     ones (api.PreparePodForUpdate, before validation).
//
// PriorityClasses, on create and update: marking a class globalDefault
// while another class already is is 403 Forbidden (`PriorityClass X is
// already marked as default. Only one default can exist`).
//
// The hook reads the PriorityClasses inside the write's transaction, so a
// class created just before a pod is seen. It changes a pod only on
// create and so is a ValidatingHook for updates.
package priorityadmission
