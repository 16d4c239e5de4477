package dev.agentjail.proxy.redact;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The built-in secret formats (corpus §8.1): each a literal trigger plus a shape check. Kind ids are stable:
 * they appear in markers, audit records and policies' allow lists.
 */
public final class Catalog {
    private static final String B32 = "A-Z2-7";
    private static final String ALNUM = "A-Za-z0-9";
    private static final String URL = "A-Za-z0-9_-";
    private static final String B64 = "A-Za-z0-9+/=";
    private static final String HEX = "0-9a-fA-F";

    private Catalog() {}

    /** Every built-in kind id, sorted. */
    public static List<String> kinds() {
        TreeSet<String> kinds = new TreeSet<>();
        for (Rule rule : rules()) {
            kinds.add(rule.kind);
        }
        return List.copyOf(kinds);
    }

    static List<Rule> rules() {
        List<Rule> r = new ArrayList<>();
        // AWS
        for (String prefix : List.of("AKIA", "ASIA", "ABIA", "ACCA")) {
            r.add(new Rule.Token("aws-access-key-id", prefix, B32, 16, 16));
        }
        r.add(new Rule.Token("aws-access-key-id", "A3T", "A-Z0-9", 17, 17));
        for (String key : List.of(
                "aws_secret_access_key",
                "AWS_SECRET_ACCESS_KEY",
                "aws-secret-access-key",
                "SecretAccessKey",
                "secretAccessKey")) {
            r.add(new Rule.KeyedValue("aws-secret-access-key", key, "A-Za-z0-9/+", 40, 40));
        }
        for (String key : List.of(
                "aws_session_token",
                "AWS_SESSION_TOKEN",
                "SessionToken",
                "sessionToken",
                "X-Amz-Security-Token",
                "x-amz-security-token")) {
            r.add(new Rule.KeyedValue("aws-session-token", key, B64, 100, 4096));
        }
        r.add(new Rule.Token("aws-bedrock-api-key", "ABSK", B64, 100, 400));
        r.add(new Rule.Token("aws-bedrock-api-key", "bedrock-api-key-", B64, 16, 4096));
        // GitHub
        r.add(new Rule.Token("github-pat", "ghp_", ALNUM, 36, 255));
        r.add(new Rule.Token("github-oauth-token", "gho_", ALNUM, 36, 255));
        r.add(new Rule.Token("github-user-token", "ghu_", ALNUM, 36, 255));
        r.add(new Rule.Token("github-app-token", "ghs_", ALNUM, 36, 255));
        r.add(new Rule.Token("github-refresh-token", "ghr_", ALNUM, 36, 255));
        r.add(new Rule.Token("github-fine-grained-pat", "github_pat_", "A-Za-z0-9_", 82, 255));
        // GitLab
        String gitlab = "A-Za-z0-9_.-";
        r.add(new Rule.Token("gitlab-pat", "glpat-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-pipeline-trigger-token", "glptt-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-runner-token", "glrt-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-deploy-token", "gldt-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-feed-token", "glft-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-incoming-mail-token", "glimt-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-agent-token", "glagent-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-oauth-secret", "gloas-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-scim-token", "glsoat-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-ci-build-token", "glcbt-", gitlab, 20, 300));
        r.add(new Rule.Token("gitlab-feature-flag-token", "glffct-", gitlab, 20, 300));
        r.add(new Rule.KeyedValue("gitlab-session", "_gitlab_session", HEX, 32, 64));
        // Slack
        String slack = "A-Za-z0-9-";
        r.add(new Rule.Token("slack-bot-token", "xoxb-", slack, 10, 300));
        r.add(new Rule.Token("slack-user-token", "xoxp-", slack, 10, 300));
        r.add(new Rule.Token("slack-refresh-token", "xoxe-", slack, 10, 300));
        r.add(new Rule.Token("slack-config-token", "xoxe.xoxb-", slack, 10, 300));
        r.add(new Rule.Token("slack-config-token", "xoxe.xoxp-", slack, 10, 300));
        r.add(new Rule.Token("slack-app-token", "xapp-", slack, 10, 300));
        for (String legacy : List.of("xoxa-", "xoxr-", "xoxo-", "xoxs-")) {
            r.add(new Rule.Token("slack-legacy-token", legacy, slack, 10, 300));
        }
        r.add(new Rule.Token("slack-webhook-url", "hooks.slack.com/services/", "A-Za-z0-9/_-", 20, 200, null, true));
        // the same secret in an origin-form target (a request to the webhook host itself)
        r.add(new Rule.Custom(
                "slack-webhook-url",
                Pattern.compile("/services/(?<secret>T[A-Z0-9]{8,12}/B[A-Z0-9]{8,12}/[A-Za-z0-9]{24})(?![A-Za-z0-9])"),
                "/services/T"));
        // Stripe (pk_ keys are publishable and deliberately absent)
        for (String env : List.of("live_", "test_", "prod_")) {
            r.add(new Rule.Token("stripe-secret-key", "sk_" + env, ALNUM, 10, 247));
            r.add(new Rule.Token("stripe-restricted-key", "rk_" + env, ALNUM, 10, 247));
        }
        // OpenAI ("T3BlbkFJ" is base64 of "OpenAI")
        r.add(new Rule.Token("openai-api-key", "sk-", URL, 20, 300, "T3BlbkFJ", false));
        r.add(new Rule.Token("openai-api-key", "sk-proj-", URL, 40, 300));
        r.add(new Rule.Token("openai-service-account-key", "sk-svcacct-", URL, 40, 300));
        r.add(new Rule.Token("openai-admin-key", "sk-admin-", URL, 40, 300));
        // Anthropic
        r.add(new Rule.Token("anthropic-api-key", "sk-ant-api03-", URL, 80, 300));
        r.add(new Rule.Token("anthropic-admin-key", "sk-ant-admin01-", URL, 80, 300));
        r.add(new Rule.Token("anthropic-key", "sk-ant-", URL, 32, 300));
        // Google
        r.add(new Rule.Token("google-api-key", "AIza", URL, 35, 35));
        // Hugging Face
        r.add(new Rule.Token("huggingface-token", "hf_", ALNUM, 34, 40));
        r.add(new Rule.Token("huggingface-org-token", "api_org_", ALNUM, 34, 40));
        // Package registries
        r.add(new Rule.Token("npm-token", "npm_", ALNUM, 36, 36));
        r.add(new Rule.Token("pypi-token", "pypi-Ag", URL, 50, 1000));
        r.add(new Rule.Token("rubygems-api-key", "rubygems_", HEX, 48, 48));
        // Keys and tokens with structure
        r.add(new Rule.PemPrivateKey());
        r.add(new Rule.Token("age-secret-key", "AGE-SECRET-KEY-1", "A-Z0-9", 58, 58));
        r.add(new Rule.Jwt());
        // Other prefix-anchored formats
        r.add(new Rule.Token("sendgrid-api-key", "SG.", "A-Za-z0-9_.-", 66, 66));
        r.add(new Rule.Token("twilio-api-key", "SK", HEX, 32, 32));
        r.add(new Rule.Token("digitalocean-pat", "dop_v1_", HEX, 64, 64));
        r.add(new Rule.Token("digitalocean-oauth-token", "doo_v1_", HEX, 64, 64));
        r.add(new Rule.Token("digitalocean-refresh-token", "dor_v1_", HEX, 64, 64));
        for (String doppler : List.of("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit.")) {
            r.add(new Rule.Token("doppler-token", doppler, "A-Za-z0-9_.-", 40, 100));
        }
        r.add(new Rule.Token("databricks-token", "dapi", "0-9a-fA-F-", 32, 34));
        r.add(new Rule.Token("vault-service-token", "hvs.", URL, 24, 300));
        r.add(new Rule.Token("vault-batch-token", "hvb.", URL, 24, 300));
        r.add(new Rule.Token("shopify-access-token", "shpat_", HEX, 32, 32));
        r.add(new Rule.Token("shopify-shared-secret", "shpss_", HEX, 32, 32));
        r.add(new Rule.Token("shopify-custom-app-token", "shpca_", HEX, 32, 32));
        r.add(new Rule.Token("shopify-private-app-token", "shppa_", HEX, 32, 32));
        r.add(new Rule.Token("pulumi-token", "pul-", HEX, 40, 40));
        r.add(new Rule.Token("linear-api-key", "lin_api_", ALNUM, 40, 40));
        r.add(new Rule.Token("postman-api-key", "PMAK-", "0-9a-fA-F-", 59, 59));
        r.add(new Rule.Token("grafana-cloud-token", "glc_", "A-Za-z0-9+/=_", 32, 400));
        r.add(new Rule.Token("grafana-service-account-token", "glsa_", "A-Za-z0-9_", 32, 60));
        r.add(new Rule.Token("grafana-api-key", "eyJrIjoi", B64, 50, 400));
        r.add(new Rule.Token("sentry-org-token", "sntrys_", "A-Za-z0-9+/=_", 50, 400));
        r.add(new Rule.Token("sentry-user-token", "sntryu_", HEX, 64, 64));
        r.add(new Rule.Token("heroku-api-key", "HRKU-AA", URL, 58, 58));
        r.add(new Rule.Token("perplexity-api-key", "pplx-", ALNUM, 48, 48));
        r.add(new Rule.Token("onepassword-service-account-token", "ops_eyJ", B64, 100, 4096));
        r.add(new Rule.Token("flyio-token", "fo1_", URL, 43, 43));
        for (String fly : List.of("fm1a_", "fm1r_", "fm2_")) {
            r.add(new Rule.Token("flyio-token", fly, "A-Za-z0-9+/=_-", 50, 8192));
        }
        r.add(new Rule.Token("openshift-token", "sha256~", URL, 43, 43));
        r.add(new Rule.AzureClientSecret());
        r.add(new Rule.Token("mailgun-api-key", "key-", HEX, 32, 32));
        return r;
    }
}
