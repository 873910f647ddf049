// Package decide holds every decision of csv-cleaner as pure functions of
// what was read from the cluster: it imports the API types and
// apimachinery, never a client (pure_test.go keeps it so). The uninstall
// (the engine, pkg/cleanup, and the controllers on it) carries its
// decisions out and `csv-cleaner plan` prints them; neither combines the
// decisions on its own.
//
// Where a reader finds each decision:
//   - policy.go: which policy selects a CSV (SelectPolicy), its settings
//     with defaults (SettingsOf), and what csv-cleaner manages (Managed);
//   - classify.go: what a CSV's deletion is (Classify: copy, upgrade,
//     reinstall, opt-out, uninstall);
//   - targets.go: the target namespaces (DecideTargets, ParseTargets) and
//     OperatorGroups OLM itself cannot read (DecideOperatorGroups);
//   - scope.go: each owned CRD's scope (ScopeCRDs);
//   - gate.go: the operand step's precedence (GateOperands: doubtful
//     OperatorGroups, then operands kept whole, then bad input);
//   - operands.go: each operand's fate (DecideOperand, PlanOperands), and
//     when it was created against the deletion (CreationOrder: the
//     deletion's own second is decided by OperandInput.AtDeletion);
//   - timeout.go: what operandTimeout and onTimeout do (TimeoutOf);
//   - cluster.go and crd.go: the fate of the CSV's cluster RBAC and
//     webhooks (ClusterObjectFate) and of its owned CRDs (CRDFate,
//     MayDisableConversion, ConversionFate: the conversion step of a CRD
//     whose webhook fails; StoredVersions: where a plan can still read it);
//   - identity.go: what a plan foresees of csv-cleaner's rights when it may
//     run as several identities (JudgeDenials);
//   - self.go: csv-cleaner's own fate when its pod stops or its own CSV is
//     deleted (DecideSelf: installed, replaced by an upgrade or a
//     reinstall, or uninstalled);
//   - backup.go: the backup gate's decisions: the Backup's name
//     (BackupName), what it includes (BackupScopeOfKinds), what its phase
//     means (GateOnBackup), when a failed one is made again (RetryBackup)
//     and whether its resource list holds every planned deletion
//     (VerifyBackup);
//   - dependents.go and volumes.go: what the garbage collector deletes
//     with the deletions (Dependents) and each claim's snapshot
//     (DecideVolume, VerifyVolumes);
//   - unread.go: whether a kind nobody can read holds an uninstall
//     (JudgeUnread);
//   - relink.go, select.go and versions.go: the undo's owner links
//     (Relink), the part of an uninstall it brings back (Select) and the
//     kinds it cannot restore at the version the Backup holds (Unserved);
//   - console.go: the console plugins an uninstalled CSV's annotation
//     names and which of them to disable (ConsolePlugins, PluginsToDisable);
//   - finalizers.go: the edits of a CSV's finalizer list (Finalizers);
//   - problem.go: Problem, bad input that blocks an uninstall;
//   - item.go: Item, one object with its action and reason;
//   - extension_*.go: a ClusterExtension's uninstall (OLM v1): which policy
//     selects it (SelectExtensionPolicy), what its deletion is
//     (ClassifyExtension: the cascade), which objects it owns (OwnershipOf,
//     ControlledSets: the controller ownerReference, directly or through a
//     ClusterObjectSet, and the owner labels agreeing), its CRDs' scopes and
//     targets (ScopeExtensionCRDs, ExtensionTargets), their fate
//     (ExtensionCRDFate) and the edit that keeps one after the extension
//     is gone (DetachFromExtension).
package decide
