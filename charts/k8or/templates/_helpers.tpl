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
