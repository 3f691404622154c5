import * as routes from '../routes/docs';
import { httpHandler } from './handler';

/**
 * Swagger UI over /openapi.json. URLs are relative to /docs, so the page
 * works wherever the API is mounted; "try it" calls the same origin.
 */
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Hatchery API</title>
<link rel="icon" type="image/png" href="docs/favicon-32x32.png">
<link rel="stylesheet" href="docs/swagger-ui.css">
<style>body { margin: 0 } .swagger-ui .topbar { display: none }</style>
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script>
window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  docExpansion: 'list',
  defaultModelsExpandDepth: 0,
  displayRequestDuration: true,
  persistAuthorization: true,
  tryItOutEnabled: false,
});
</script>
</body>
</html>`;

export const handler = httpHandler(routes.docs, async () => ({
  statusCode: 200,
  headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' },
  body: page,
}));
