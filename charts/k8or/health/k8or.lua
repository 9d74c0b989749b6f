-- Argo CD health check for k8or's Bucket, Table and ProviderConfig (group k8or.io).
-- Paste it under resource.customizations.health.k8or.io_Bucket, ..._Table and ..._ProviderConfig
-- in argocd-cm (docs/install.md). Lua 5.1, as Argo CD's gopher-lua runs it.
--
-- Bucket and Table:
--   Suspended    paused (k8or.io/paused), or drift held for approval (spec.driftPolicy Hold)
--   Progressing  not reconciled yet; a new generation not applied yet; Reconciling; deleting
--   Degraded     Stalled: nothing changes until a user acts (the message says what)
--   Healthy      Ready and Synced True for the current generation (or drift only reported)
-- ProviderConfig: settings the webhook checked at apply time, Healthy unless being deleted or its
-- status carries conditions that say more; the objects that use it report trouble reaching the cloud.
local hs = {}
local meta = obj.metadata or {}
local status = obj.status or {}
local generation = meta.generation

local function condition(conditionType)
  if status.conditions == nil then
    return nil
  end
  for _, c in ipairs(status.conditions) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

-- A condition stamped with an older generation speaks of an older spec.
local function current(c)
  return c ~= nil and (c.observedGeneration == nil or generation == nil or c.observedGeneration == generation)
end

local function isTrue(c)
  return c ~= nil and c.status == "True"
end

local function describe(c)
  local reason = c.reason or c.type
  if c.message ~= nil and c.message ~= "" then
    return reason .. ": " .. c.message
  end
  return reason
end

local ready = condition("Ready")
local synced = condition("Synced")
local stalled = condition("Stalled")
local reconciling = condition("Reconciling")

if obj.kind == "ProviderConfig" then
  if meta.deletionTimestamp ~= nil or isTrue(reconciling) then
    hs.status = "Progressing"
    hs.message = meta.deletionTimestamp ~= nil and "Deleting." or describe(reconciling)
  elseif isTrue(stalled) or (ready ~= nil and ready.status == "False") then
    hs.status = "Degraded"
    hs.message = describe(isTrue(stalled) and stalled or ready)
  else
    hs.status = "Healthy"
    hs.message = "ProviderConfig for " .. tostring(obj.spec ~= nil and obj.spec.provider or "a provider") .. "."
  end
  return hs
end

-- Argo CD itself answers Progressing ("Pending deletion") for an object being deleted, before it
-- runs a health check; this says the same, with the reason, for other readers of the script.
if meta.deletionTimestamp ~= nil then
  hs.status = "Progressing"
  local why = stalled or reconciling or ready
  hs.message = "Deleting" .. (why ~= nil and (". " .. describe(why)) or ".")
  return hs
end

if meta.annotations ~= nil and meta.annotations["k8or.io/paused"] == "true" then
  hs.status = "Suspended"
  hs.message = "Reconciling is paused by the k8or.io/paused annotation; remove it to resume."
  return hs
end

if ready == nil or synced == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the k8or operator to reconcile it."
  return hs
end

if isTrue(stalled) and current(stalled) then
  hs.status = "Degraded"
  hs.message = describe(stalled)
  return hs
end

if not current(synced) or (status.observedGeneration ~= nil and status.observedGeneration ~= generation) then
  hs.status = "Progressing"
  hs.message = "Applying generation " .. tostring(generation) .. ". " .. describe(isTrue(reconciling) and reconciling or synced)
  return hs
end

if synced.status == "False" and synced.reason == "DriftHeld" then
  hs.status = "Suspended"
  hs.message = describe(synced)
  return hs
end

if isTrue(reconciling) then
  hs.status = "Progressing"
  hs.message = describe(reconciling)
  return hs
end

if isTrue(ready) and isTrue(synced) then
  hs.status = "Healthy"
  hs.message = describe(ready)
  return hs
end

if isTrue(ready) and (synced.reason == "DriftReported" or synced.reason == "DriftDetected") then
  hs.status = "Healthy"
  hs.message = describe(synced)
  return hs
end

hs.status = "Progressing"
hs.message = describe(isTrue(ready) and synced or ready)
return hs
