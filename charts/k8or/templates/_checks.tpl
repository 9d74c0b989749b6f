{{/*
Combinations of values that cannot work and that values.schema.json cannot see, because JSON Schema
cannot compare one value with another. (Single values, and replicaCount > 1 without leader election,
are refused by values.schema.json.)
*/}}
{{- define "k8or.checkValues" -}}
{{- $ports := dict -}}
{{- range $name, $port := dict "webhook.port" .Values.webhook.port "metrics.port" .Values.metrics.port "probes.port" .Values.probes.port -}}
{{- $key := toString $port -}}
{{- if hasKey $ports $key -}}
{{- fail (printf "%s and %s are both %s: the webhook, metrics and probes servers of one container each need their own port" (get $ports $key) $name $key) -}}
{{- end -}}
{{- $_ := set $ports $key $name -}}
{{- end -}}
{{- with .Values.podDisruptionBudget -}}
{{- if and .enabled (not $.Values.sharding.enabled) -}}
{{- $replicas := int $.Values.replicaCount -}}
{{- $min := .minAvailable -}}
{{- $blocks := false -}}
{{- if kindIs "string" $min -}}
{{- /* a percentage rounds up: ceil(replicas * p / 100) >= replicas when replicas * p > 100 * (replicas - 1) */ -}}
{{- $blocks = gt (mul $replicas (int (trimSuffix "%" $min))) (mul 100 (sub $replicas 1)) -}}
{{- else -}}
{{- $blocks = ge (int $min) $replicas -}}
{{- end -}}
{{- if $blocks -}}
{{- fail (printf "podDisruptionBudget.minAvailable %v with replicaCount %d leaves no Pod that may be evicted, so every node drain would wait forever: raise replicaCount, lower minAvailable, or set podDisruptionBudget.enabled=false" $min $replicas) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
