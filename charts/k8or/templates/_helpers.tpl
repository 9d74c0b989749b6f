{{/* The names every object of the release uses. */}}
{{- define "k8or.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "k8or.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "k8or.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{ include "k8or.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "k8or.serviceAccountName" -}}
{{- include "k8or.fullname" . -}}
{{- end -}}

{{- define "k8or.webhookServiceName" -}}
{{- printf "%s-webhook" (include "k8or.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Without cert-manager: the Secret the replicas share their self-signed CA and certificate through. */}}
{{- define "k8or.webhookCertSecretName" -}}
{{- printf "%s-cert" (include "k8or.webhookServiceName" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The webhook configurations keep the operator's default names: it writes caBundle into these. */}}
{{- define "k8or.validatingWebhookName" -}}k8or-validating-webhook{{- end -}}
{{- define "k8or.mutatingWebhookName" -}}k8or-mutating-webhook{{- end -}}

{{/* Providers the operator loads: the enabled ones, comma-separated (empty: every installed provider). */}}
{{- define "k8or.providers" -}}
{{- $enabled := list -}}
{{- range $name := list "aws" "gcp" "azure" -}}
{{- if (index $.Values.providers $name).enabled -}}
{{- $enabled = append $enabled $name -}}
{{- end -}}
{{- end -}}
{{- join "," $enabled -}}
{{- end -}}

{{- define "k8or.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
Sharded, the webhook runs apart, in the Deployment <fullname>-webhook: its cache holds every Bucket and
Table of the cluster, which would defeat the shards' share. Its Pods are named apart
(app.kubernetes.io/name: <chart>-webhook) so that the operator Deployment's selector (name and instance,
immutable) never matches them, nor does the operator's PodDisruptionBudget; the webhook Service selects
them alone, and the metrics Service both Deployments' Pods, by app.kubernetes.io/part-of.
*/}}
{{- define "k8or.webhookSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}-webhook
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: webhook
{{- end -}}

{{/* Sharded: the webhook Pods' ServiceAccount, granted only what admission calls (rbac.yaml). */}}
{{- define "k8or.webhookServiceAccountName" -}}
{{- include "k8or.webhookDeploymentName" . -}}
{{- end -}}

{{- define "k8or.webhookDeploymentName" -}}
{{- printf "%s-webhook" (include "k8or.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Sharded: both Deployments' Pods carry it, and the metrics Service selects them by it (with the instance). */}}
{{- define "k8or.partOfLabel" -}}
app.kubernetes.io/part-of: {{ .Chart.Name }}
{{- end -}}

{{/* The env of the admission webhook's server, in whichever process serves it. */}}
{{- define "k8or.webhookEnv" -}}
- name: K8OR_WEBHOOK_BIND_ADDRESS
  value: ":{{ .Values.webhook.port }}"
# the Service the API server calls: a self-signed certificate names it (<svc>.<ns>.svc)
- name: K8OR_WEBHOOK_SERVICE_NAME
  value: {{ include "k8or.webhookServiceName" . }}
- name: K8OR_WEBHOOK_SERVICE_NAMESPACE
  value: {{ .Release.Namespace }}
{{- if .Values.webhook.certManager.enabled }}
- name: K8OR_WEBHOOK_CERT_DIR
  value: /etc/k8or/webhook-certs
{{- else }}
# every replica serves the one CA and certificate of this Secret (the first creates it)
- name: K8OR_WEBHOOK_CERT_SECRET
  value: {{ include "k8or.webhookCertSecretName" . }}
- name: K8OR_WEBHOOK_CERT_CHECK_INTERVAL
  value: {{ .Values.webhook.selfSigned.checkInterval | quote }}
{{- end }}
{{- end -}}

{{/* The Pods' security settings, the same for the operator and the webhook. */}}
{{- define "k8or.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  fsGroup: 65532
  seccompProfile:
    type: RuntimeDefault
{{- end -}}

{{- define "k8or.containerSecurityContext" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
{{- end -}}

{{- define "k8or.probes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: probes
  initialDelaySeconds: 10
  periodSeconds: 10
readinessProbe:
  httpGet:
    path: /readyz
    port: probes
  periodSeconds: 5
{{- end -}}
